// The floor of durable writes with live fan-out on this machine: the same uWebSockets.js and LMDB as the service
// and nothing else. POST /persons puts one record of the size the service commits for a person create (its WAL
// entry and event record, 286 + 439 bytes) with sync durability and answers 201 once the put is durable; each
// subscriber of WS /events gets, per committed write, one JSON frame of the service's size and shape through one
// app.publish on one topic. No authentication, validation, chain or actor. bench/events.ts runs it beside the
// service (--server). Prints the same "listening on" line as src/main.ts.
import { randomUUID } from 'node:crypto';
import { uws } from '../src/http/uws.js';
import { openTempStore } from './lib/temp-store.js';

const host = process.env['SERVICE_HOST'] || '127.0.0.1';
const port = Number(process.env['SERVICE_PORT'] || 0);
const ORG = 'bench-org';
const TOPIC = 'events';
/** What src/main.ts commits for one POST /persons: a WAL entry of 286 bytes and an event record of 439. */
const RECORD_BYTES = 286 + 439;
/** The service's frames carry a SHA-256 chain link in hex; here a constant of the same length. */
const CHAIN = 'f9ca95dabb1ac9153082920218b2f371d15d094f51c7dd665b99207e9d52ac80';

// The service's own store, sync durability: a put's promise resolves once LMDB has synced it to disk.
const temp = openTempStore('identity-bench-fanout-', true);
const wal = temp.store.wal;
let offset = 0;

/** The service's timestamps have nine fraction digits; Date gives three. */
const stamp = () => `${new Date().toISOString().slice(0, -1)}000000Z`;

function frameOf(n: number, personId: string, email: string, timestamp: string): string {
  const event = `{"event_metadata":{"is_test_event":false,"event_id":"${randomUUID()}","timestamp":"${timestamp}","source":"Cloud","event_type":"PersonCreated","event_name":"PersonCreated_v1","event_version":"1","organization_id":"${ORG}","root_organization_id":"${ORG}"},"person_id":"${personId}","region":"europe-belgium","handles":[{"type":"EmailAddress","value":${JSON.stringify(email)}}],"gdpr_consents":[]}`;
  return `{"offset":${n},"chain":"${CHAIN}","event":${event}}`;
}

const app = uws.App();
app.post('/persons', (res) => {
  const chunks: Buffer[] = [];
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast) return;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { handles?: Array<{ value?: string }> };
    const email = body.handles?.[0]?.value ?? '';
    const personId = randomUUID();
    const n = ++offset;
    const frame = frameOf(n, personId, email, stamp());
    const record = Buffer.alloc(RECORD_BYTES);
    record.write(frame);
    void wal.put([ORG, n], record).then(() => {
      app.publish(TOPIC, frame, false, false);
      if (aborted) return;
      res.cork(() => {
        res
          .writeStatus('201 Created')
          .writeHeader('Content-Type', 'application/json')
          .end(`{"result":{"person_id":"${personId}","active":true,"person_type":"regular","region":"europe-belgium","handles":[{"type":"email_address","value":${JSON.stringify(email)}}],"groups":[]}}`);
      });
    });
  });
});
// The query (?types=PersonCreated_v1) and the credentials are accepted and not read: every write is a person create.
app.ws('/events', {
  maxBackpressure: 0,
  maxPayloadLength: 4 * 1024,
  idleTimeout: 120,
  sendPingsAutomatically: true,
  compression: uws.DISABLED,
  open: (ws) => void ws.subscribe(TOPIC),
});
app.listen(host, port, (socket) => {
  if (!socket) throw new Error(`cannot listen on ${host}:${port}`);
  console.log(`listening on http://${host}:${uws.us_socket_local_port(socket)} (minimal fan-out server, data in ${temp.dir})`);
});
process.on('SIGTERM', () => {
  void temp.close().finally(() => process.exit(0));
});
