// The HTTP front: unknown routes and methods, body limits and media types, consistency headers on every
// mutating route, malformed bodies on every route that takes one, and the public routes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { expectBare, expectError, expectNoContent, expectResult, offsets, unchanged } from '../support/expect.js';
import { END_USER_ROUTES, FACTOR_ENROLLMENT_ROUTES, PERSON_TOKEN_ROUTES, mutating, OAUTH_CLIENT_ROUTES, OAUTH_PERSON_ROUTES, OPERATOR_ROUTES, PUBLIC_ROUTES, routeCases, type RouteCase } from '../support/routes.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;
let cases: RouteCase[];
let personId: string;

before(async () => {
  server = await startTestServer();
  c = server.client;
  await c.post('/groups', { name: 'staff' });
  const created = await c.post('/persons', { ...email('front@example.com'), groups: ['staff'] });
  personId = expectResult(created, 201).person_id;
  const consistencyToken = created.headers.get('service-consistency-token') ?? undefined;
  await c.put('/organizations/attributes/end_user_read_write', { kept: true });
  const webhook = expectResult(await c.post('/organizations/webhooks', { name: 'front', target_url: 'https://hooks.example.com/front' }), 201).id;
  await c.post(`/organizations/webhooks/${webhook}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' });
  expectNoContent(await c.post('/rbac/permissions', { name: 'sample.permission' }));
  expectNoContent(await c.post('/rbac/roles', { name: 'sample-role', permissions: ['sample.permission'] }));
  await c.post('/organizations/sso/oidc/provider-credentials', { client_id: 'front-client', client_secret: 'front secret', provider: 'github' });
  const oauthClient = expectResult(await c.post('/oauth2/clients', { client_name: 'front', scopes: ['front.read'], grant_types: ['client_credentials'] }), 201).client_id;
  cases = routeCases({ person: personId, group: 'staff', webhook, credential: 'front-client', oauthClient, ...(consistencyToken && { consistencyToken }) });
});
after(() => server.stop());

/** Runs `check` on each route; no WAL entry may be written, and the organization reads back the same. */
async function sweep(routes: RouteCase[], check: (r: RouteCase) => Promise<void>): Promise<void> {
  await unchanged(c, async () => {
    for (const r of routes) {
      const before = offsets(server);
      try {
        await check(r);
        assert.deepEqual(offsets(server), before, 'a WAL entry was written');
      } catch (error) {
        (error as Error).message = `${r.method} ${r.route}: ${(error as Error).message}`;
        throw error;
      }
    }
  }, server);
}

describe('routing', () => {
  test('an unknown route is a 404 naming it, with or without credentials', async () => {
    for (const path of ['/nope', '/', '/Persons', '/persons/x/y', '/persons/x/groups/y', '/organizations/attribute', '/groups/a/b/c', '/persons/', '/healthz']) {
      expectError(await c.get(path), 404, path);
      expectError(await c.as('', '').post(path, {}), 404);
    }
  });

  test('a method a path does not have is a 405 naming it, with an Allow header, on every path', async () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of cases) {
      const path = r.path.split('?')[0] as string;
      (byPath.get(path) ?? byPath.set(path, new Set()).get(path))?.add(r.method);
    }
    await unchanged(c, async () => {
      for (const [path, methods] of byPath) {
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
          if (methods.has(method)) continue;
          const r = await c.request(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
          expectError(r, 405, method);
          assert.deepEqual(new Set(r.headers.get('allow')?.split(', ')), methods, `${method} ${path}`);
        }
      }
      expectError(await c.post('/health', {}), 405, 'POST');
    }, server);
  });
});

describe('query parameters', () => {
  test('an unknown query parameter is a 400 naming it, on every route, and nothing changes', async () => {
    await sweep(cases, async (r) => {
      const path = `${r.path}${r.path.includes('?') ? '&' : '?'}bogus_param=1`;
      expectError(await c.request(r.method, path, r.body === undefined ? undefined : JSON.stringify(r.body)), 400, 'bogus_param');
    });
  });
});

describe('bodies', () => {
  const target = '/organizations/attributes/end_user_no_access';

  /** A JSON attribute set of exactly `size` bytes, every value within the 64 KiB limit. */
  function bodyOf(size: number): string {
    const entries: string[] = [];
    let used = 2;
    for (let i = 0; ; i++) {
      const overhead = `"k${i}":""`.length + (entries.length > 0 ? 1 : 0);
      const room = size - used - overhead;
      const n = Math.min(room, 60_000);
      entries.push(`"k${i}":"${'x'.repeat(n)}"`);
      used += overhead + n;
      if (n === room) break;
    }
    const text = `{${entries.join(',')}}`;
    assert.equal(Buffer.byteLength(text), size);
    return text;
  }

  test('a body of exactly 1 MiB is read; one byte more is a 413, and nothing changes', async () => {
    expectNoContent(await c.put(target, bodyOf(1024 * 1024)));
    assert.equal(Object.keys(expectResult(await c.get(target), 200)).length, 18);
    expectNoContent(await c.delete(target));
    await unchanged(c, async () => {
      expectError(await c.put(target, bodyOf(1024 * 1024 + 1)), 413, '1048576');
      expectError(await c.post('/persons', { handles: [{ type: 'username', value: 'u'.repeat(2 * 1024 * 1024) }] }), 413);
    }, server);
  });

  test('a body over the limit without a Content-Length (chunked) is a 413 too, and nothing changes', async () => {
    await unchanged(c, async () => {
      const chunks = 20;
      const stream = new ReadableStream<Uint8Array>({
        start(ctrl) {
          ctrl.enqueue(new TextEncoder().encode('{"k":"'));
          for (let i = 0; i < chunks; i++) ctrl.enqueue(new Uint8Array(100 * 1024).fill(0x78));
          ctrl.enqueue(new TextEncoder().encode('"}'));
          ctrl.close();
        },
      });
      const res = await fetch(c.base + target, {
        method: 'PUT',
        body: stream,
        duplex: 'half',
        headers: { 'Service-OrgID': c.orgId, 'Service-API-Key': c.apiKey, 'Content-Type': 'application/json' },
      } as RequestInit);
      const text = await res.text();
      assert.equal(res.status, 413, text);
      assert.match(JSON.parse(text).errors[0].message, /larger than/);
    }, server);
  });

  test('a Content-Type other than JSON is a 415; a JSON nested too deep a 400', async () => {
    await unchanged(c, async () => {
      expectError(await c.put(target, { a: 1 }, { 'Content-Type': 'text/plain' }), 415, 'Content-Type');
      expectError(await c.post('/groups', 'name=abc', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'application/json');
      expectError(await c.put(target, { deep: JSON.parse('['.repeat(100) + ']'.repeat(100)) }), 400, 'nested');
    }, server);
    // charset parameters are fine
    expectNoContent(await c.put(target, { a: 1 }, { 'Content-Type': 'application/json; charset=utf-8' }));
    expectNoContent(await c.delete(target));
  });

  test('a string with a lone UTF-16 surrogate is a 400 naming where; a surrogate pair is text like any other', async () => {
    await unchanged(c, async () => {
      expectError(await c.put(target, '{"a": {"b": ["ok", "x\\ud800y"]}}'), 400, 'a.b[1]', 'surrogate');
      expectError(await c.put(target, '{"\\udc00": 1}'), 400, 'surrogate');
      expectError(await c.post('/persons', '{"handles": [{"type": "email_address", "value": "a\\udfff@example.com"}]}'), 400, 'handles[0].value');
      expectError(await c.post('/groups', '{"name": "ok1", "description": "\\ud83d"}'), 400, 'description');
    }, server);
    expectNoContent(await c.put(target, '{"smile": "\\ud83d\\ude00", "escaped": "\\\\ud800"}'));
    assert.deepEqual(expectResult(await c.get(target), 200), { smile: '😀', escaped: '\\ud800' });
    expectNoContent(await c.delete(target));
  });

  test('malformed JSON, no body, or a body of the wrong type is a 400 naming the body, on every route that takes one', async () => {
    // JSON bodies only: a route whose body is another media type (multipart) declares its headers
    const withBody = cases.filter((r) => r.body !== undefined && r.headers === undefined);
    assert.ok(withBody.length >= 10);
    await sweep(withBody, async (r) => {
      for (const raw of ['{', '{"a":}', "{'a':1}", '{"a":1} x', 'nul']) expectError(await c.request(r.method, r.path, raw), 400, 'malformed JSON');
      if (!r.bodyOptional) {
        expectError(await c.request(r.method, r.path, ''), 400, 'body');
        expectError(await c.request(r.method, r.path, undefined, { 'Content-Type': 'application/json' }), 400, 'body');
      }
      for (const raw of ['[]', '"text"', '42', 'null', 'true']) expectError(await c.request(r.method, r.path, raw), 400, 'body');
    });
  });
});

describe('consistency headers', () => {
  const bad: Array<[string, string, string]> = [
    ['Service-Required-Consistency', 'foo', 'Service-Required-Consistency'],
    ['Service-Required-Consistency', 'LOCAL_REGION', 'Service-Required-Consistency'],
    ['Service-Required-Consistency', 'local_region,all_regions', 'Service-Required-Consistency'],
    ['Service-Required-Consistency-Timeout', '0', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', '121', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', '1.5', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', 'abc', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', '-1', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', '30s', 'Service-Required-Consistency-Timeout'],
    ['Service-Required-Consistency-Timeout', '1e1', 'Service-Required-Consistency-Timeout'],
  ];

  test('a bad level or timeout is a 400 naming the header, on every mutating route, and nothing changes', async () => {
    const routes = cases.filter(mutating);
    assert.equal(routes.length, 87);
    await sweep(routes, async (r) => {
      for (const [header, value, mention] of bad) {
        expectError(await c.request(r.method, r.path, r.body, { [header]: value }), 400, mention, value);
      }
    });
  });

  test('reads ignore the headers', async () => {
    // The sample cloud connection does not exist (one needs a provider behind it): its read answers 404.
    for (const r of cases.filter((x) => !mutating(x))) {
      const want = r.route === '/cloud/connections/{connection_id}' ? 404 : 200;
      assert.equal((await c.request(r.method, r.path, undefined, { 'Service-Required-Consistency': 'foo' })).status, want, `${r.method} ${r.route}`);
    }
  });

  test('the allowed values are accepted: both levels, timeouts 1 and 120', async () => {
    const headers: Array<Record<string, string>> = [
      { 'Service-Required-Consistency': 'local_region' },
      { 'Service-Required-Consistency': 'all_regions', 'Service-Required-Consistency-Timeout': '1' },
      { 'Service-Required-Consistency-Timeout': '120' },
    ];
    for (const [i, h] of headers.entries()) {
      expectBare(await c.post('/groups', { name: `consistent${i}` }, h), 201);
      expectNoContent(await c.patch('/organizations/attributes/end_user_read_only', { [`k${i}`]: i }, h));
      expectResult(await c.patch(`/persons/${personId}`, { active: i % 2 === 0 }, h), 200);
    }
    assert.deepEqual(expectResult(await c.get('/organizations/attributes/end_user_read_only'), 200), { k0: 0, k1: 1, k2: 2 });
  });
});

describe('public routes', () => {
  test('GET /health: the envelope with status, native_http and the regions', async () => {
    const r = await c.as('', '').get('/health');
    assert.deepEqual(r.body, { result: { status: 'ok', native_http: true, regions: [{ name: 'europe-belgium', state: 'local', lag_entries: 0 }] } });
  });

  test('GET /metrics: Prometheus text with request counts by route, method and status', async () => {
    await c.get('/groups/staff');
    await c.get('/groups/ghost');
    const r = await c.as('', '').get('/metrics');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(r.text, /^# TYPE http_requests_total counter$/m);
    assert.match(r.text, /^http_requests_total\{route="\/groups\/\{group_name\}",method="get",status="200"\} \d+$/m);
    assert.match(r.text, /^http_requests_total\{route="\/groups\/\{group_name\}",method="get",status="404"\} \d+$/m);
    assert.match(r.text, /^# TYPE http_request_duration_seconds histogram$/m);
  });

  test('GET /openapi.json: an OpenAPI 3.1 document of exactly the routes served', async () => {
    const r = await c.as('', '').get('/openapi.json');
    assert.equal(r.status, 200);
    const doc = r.body;
    assert.equal(doc.openapi, '3.1.0');
    const served = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    // WS /events is served by the WebSocket upgrade, not the route table: it appears as its upgrade request.
    const expected = [...cases.map((x) => `${x.method} ${x.route}`), ...PUBLIC_ROUTES, ...END_USER_ROUTES, ...OPERATOR_ROUTES, ...OAUTH_CLIENT_ROUTES, ...OAUTH_PERSON_ROUTES, ...PERSON_TOKEN_ROUTES, ...FACTOR_ENROLLMENT_ROUTES, 'GET /events'];
    assert.deepEqual(served.sort(), expected.sort());
    const events = doc.paths['/events'].get;
    assert.deepEqual(events.parameters.map((p: { name: string }) => p.name).sort(), ['api_key', 'consistency_token', 'format', 'from', 'org_id', 'types']);
    assert.ok(events.responses['101'].headers['Service-Events-Head-Offset']);
    assert.match(events.description, /4008.*4001.*1001/);
    assert.equal(doc.paths['/persons/{person_id}'].delete.responses['204'].content, undefined);
    assert.ok(doc.paths['/persons'].post.requestBody.content['application/json'].schema.properties.handles);
    assert.deepEqual(doc.paths['/persons'].post.security, [{ orgId: [], apiKey: [] }]);
  });
});

describe('requests without a body and with one, on one keep-alive connection', () => {
  /** Writes raw requests on one socket and reads until `count` complete responses have arrived. */
  async function exchange(raw: string, count: number): Promise<Array<{ status: number; body: string }>> {
    const socket = connect(server.service.port, '127.0.0.1');
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    try {
      let data = '';
      const responses: Array<{ status: number; body: string }> = [];
      await new Promise<void>((resolve, reject) => {
        socket.on('error', reject);
        socket.on('data', (chunk) => {
          data += chunk.toString('latin1');
          for (;;) {
            const end = data.indexOf('\r\n\r\n');
            if (end < 0) break;
            const head = data.slice(0, end);
            const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
            if (data.length < end + 4 + length) break;
            responses.push({ status: Number(head.slice(9, 12)), body: data.slice(end + 4, end + 4 + length) });
            data = data.slice(end + 4 + length);
          }
          if (responses.length >= count) resolve();
        });
        socket.write(raw);
      });
      return responses;
    } finally {
      clearTimeout(timer);
      socket.destroy();
    }
  }

  test('a read answers alike with no body, an empty one or a small one, and the connection goes on', async () => {
    const auth = `Host: x\r\nService-OrgID: ${c.orgId}\r\nService-API-Key: ${c.apiKey}\r\n`;
    const get = `GET /persons/${personId} HTTP/1.1\r\n${auth}`;
    const rs = await exchange(`${get}\r\n${get}Content-Length: 0\r\n\r\n${get}Content-Length: 7\r\n\r\n{"a":1}${get}\r\n`, 4);
    assert.deepEqual(rs.map((r) => r.status), [200, 200, 200, 200]);
    for (const r of rs) assert.equal(JSON.parse(r.body).result.person_id, personId);
  });

  test('a read with a declared body over the limit is still a 413', async () => {
    const [r] = await exchange(`GET /persons/${personId} HTTP/1.1\r\nHost: x\r\nService-OrgID: ${c.orgId}\r\nService-API-Key: ${c.apiKey}\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`, 1);
    assert.equal(r?.status, 413);
    assert.match(JSON.parse(r?.body ?? '{}').errors[0].message, /larger than/);
  });
});
