// The ceiling of the HTTP layer alone: uWebSockets.js answering a fixed body. Prints its port as JSON.
import { uws } from '../src/http/uws.js';

const app = uws.App();
app.any('/*', (res) => {
  res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end('{"result":"hello"}');
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('cannot listen');
  console.log(JSON.stringify({ port: uws.us_socket_local_port(socket) }));
});
process.on('SIGTERM', () => process.exit(0));
