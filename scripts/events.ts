// Subscribes to an organization's event stream (WS /events) and prints one JSON line per event:
// the project's own subscriber, so trying the stream needs nothing but the repository.
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const USAGE = `usage: npm run events -- [--url http://127.0.0.1:8080] [--org ID] [--key KEY] [--from N] [--types A_v1,B_v1]
  --org and --key default to SERVICE_ORG_ID and SERVICE_API_KEY; --url to SERVICE_URL.
  Without --from, only events committed from now on; with it, every retained event from offset N, then live ones.`;

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: process.env['SERVICE_URL'] ?? 'http://127.0.0.1:8080' },
    org: { type: 'string', default: process.env['SERVICE_ORG_ID'] },
    key: { type: 'string', default: process.env['SERVICE_API_KEY'] },
    from: { type: 'string' },
    types: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help || values.org === undefined || values.key === undefined) {
  console.error(USAGE);
  process.exit(values.help ? 0 : 2);
}

const target = new URL('/events', values.url.replace(/^http/, 'ws'));
if (values.from !== undefined) target.searchParams.set('from', values.from);
if (values.types !== undefined) target.searchParams.set('types', values.types);

const socket = new WebSocket(target, { headers: { 'Service-OrgID': values.org, 'Service-API-Key': values.key } });
// A refused subscription is an HTTP answer with the error envelope: show it as the service wrote it.
socket.on('unexpected-response', (_req, res) => {
  let body = '';
  res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  res.on('end', () => {
    console.error(`refused: ${res.statusCode} ${body}`);
    process.exit(1);
  });
});
socket.on('open', () => console.error(`subscribed to ${target.origin}/events${target.search} (Ctrl-C stops)`));
socket.on('message', (data: Buffer) => process.stdout.write(`${data.toString('utf8')}\n`));
socket.on('close', (code, reason) => {
  console.error(`closed: ${code} ${reason.toString('utf8')}`);
  process.exit(code === 1000 ? 0 : 1);
});
socket.on('error', (error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
