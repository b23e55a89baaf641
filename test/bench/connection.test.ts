import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { Connection, encodeRequest } from '../../bench/lib/connection.js';

let http: Server;
let tcp: TcpServer;
const bodies: string[] = [];

before(async () => {
  // A real HTTP server checks the requests the load generator encodes, and answers in each framing.
  http = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(`${req.method} ${req.url} ${req.headers['x-case']} ${body}`);
      if (req.url === '/length') res.end('hello');
      else if (req.url === '/empty') res.writeHead(204).end();
      else {
        res.writeHead(201);
        res.write('hel');
        setTimeout(() => res.end('lo'), 5);
      }
    });
  });
  // A raw server that answers one byte at a time, so every response arrives split at every position.
  tcp = createTcpServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', async () => {
      for (const byte of Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 3\r\n\r\nabc')) {
        socket.write(Buffer.from([byte]));
        await new Promise((r) => setImmediate(r));
      }
    });
  });
  await Promise.all([new Promise<void>((r) => http.listen(0, '127.0.0.1', r)), new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r))]);
});

after(async () => {
  http.closeAllConnections();
  await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => tcp.close(r))]);
});

test('given one keep-alive connection, then requests with and without bodies get each framing of response in turn', async () => {
  const c = new Connection('127.0.0.1', (http.address() as AddressInfo).port);
  await c.ready;
  try {
    const put = encodeRequest('127.0.0.1', { method: 'PUT', path: '/length', headers: { 'X-Case': 'a' }, body: '{"n":1}' });
    assert.equal(await c.send(put), 200);
    assert.equal(await c.send(encodeRequest('127.0.0.1', { method: 'GET', path: '/empty', headers: { 'X-Case': 'b' } })), 204);
    assert.equal(await c.send(encodeRequest('127.0.0.1', { method: 'POST', path: '/chunked', headers: { 'X-Case': 'c' } })), 201);
    assert.equal(await c.send(put), 200);
    assert.deepEqual(bodies, ['PUT /length a {"n":1}', 'GET /empty b ', 'POST /chunked c ', 'PUT /length a {"n":1}']);
    await assert.rejects(Promise.all([c.send(put), c.send(put)]), /one request at a time/);
  } finally {
    c.close();
  }
});

test('given a response that arrives a byte at a time, then it is framed once, whole', async () => {
  const c = new Connection('127.0.0.1', (tcp.address() as AddressInfo).port);
  await c.ready;
  try {
    const get = encodeRequest('127.0.0.1', { method: 'GET', path: '/' });
    assert.equal(await c.send(get), 200);
    assert.equal(await c.send(get), 200);
  } finally {
    c.close();
  }
});

test('given a server that goes away, then the request in flight fails and the connection says so', async () => {
  const server = createTcpServer((socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const c = new Connection('127.0.0.1', (server.address() as AddressInfo).port);
  try {
    await c.ready;
    await assert.rejects(c.send(encodeRequest('127.0.0.1', { method: 'GET', path: '/' })), /closed|ECONNRESET/);
    assert.equal(c.broken, true);
  } finally {
    c.close();
    await new Promise((r) => server.close(r));
  }
});
