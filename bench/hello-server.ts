// The ceiling of the HTTP layer alone: uWebSockets.js answering every request with a small fixed JSON body,
// run as its own process like the service. Prints the same "listening on" line as src/main.ts, so one spawner
// (bench/lib/server-process.ts) starts both.
import { uws } from '../src/http/uws.js';

const host = process.env['SERVICE_HOST'] || '127.0.0.1';
const port = Number(process.env['SERVICE_PORT'] || 0);

uws
  .App()
  .any('/*', (res) => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end('{"result":"hello"}');
  })
  .listen(host, port, (socket) => {
    if (!socket) {
      console.error(`cannot listen on ${host}:${port}`);
      process.exit(1);
    }
    console.log(`listening on http://${host}:${uws.us_socket_local_port(socket)} (hello world)`);
  });
process.on('SIGTERM', () => process.exit(0));
