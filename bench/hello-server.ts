// The ceiling: a hello-world route on uWebSockets.js with nothing else, run as its own process like the service.
// It prints the same "listening on" line as src/main.ts, so one spawner serves both.
import uws from 'uWebSockets.js';

const host = process.env['SERVICE_HOST'] || '127.0.0.1';
const port = Number(process.env['SERVICE_PORT'] || 0);

uws
  .App()
  .get('/hello', (res) => {
    res.end('Hello World!');
  })
  .listen(host, port, (socket) => {
    if (!socket) {
      console.error(`cannot listen on ${host}:${port}`);
      process.exit(1);
    }
    console.log(`listening on http://${host}:${uws.us_socket_local_port(socket)} (hello world)`);
  });
