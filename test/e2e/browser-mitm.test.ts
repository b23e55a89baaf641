import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch } from 'undici';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { Subscriber } from '../support/ws.js';
import { waitFor } from '../support/regions.js';

describe('phishing (MITM) detection', () => {
  let server: TestServer;
  let org: Org;
  let events: ReturnType<typeof recordEvents>;
  let token: string;
  let imageUrl: string;
  before(async () => {
    server = await startTestServer({ SERVICE_MITM_RATE_PER_KEY: '2', SERVICE_MITM_RATE_WINDOW: '3600' });
    org = await newOrg(server);
    events = recordEvents(server);
    const r = await org.admin.post('/organizations/mitm-tokens', { allowed_domains: ['Shop.example', '*.shop.example'], tag: 'main shop' });
    assert.equal(r.status, 201, r.text);
    token = r.body.result.token;
    imageUrl = r.body.result.image_url;
  });
  after(() => server.stop());

  const view = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers: { 'User-Agent': 'victim-browser/1', ...headers } });
  const image = (headers: Record<string, string> = {}) => view(imageUrl, headers);

  test('management: 201 with the image URL and the snippet, listed, validated, deleted', async () => {
    assert.match(token, /^[A-Za-z0-9]{16,}$/);
    assert.equal(imageUrl, `${server.service.issuer}/mitm/${token}.png`);
    const list = await org.admin.get('/organizations/mitm-tokens');
    assert.deepEqual(list.body.result.map((t: any) => [t.token, t.allowed_domains, t.tag]), [[token, ['shop.example', '*.shop.example'], 'main shop']]);
    const snippet = list.body.result[0].snippet as string;
    assert.ok(snippet.includes(`url('${imageUrl}')`));
    assert.ok(!/display:\s*none/.test(snippet), 'a display: none element never fetches its background');
    for (const [body, message] of [
      [{ allowed_domains: [], tag: 'x' }, /allowed_domains/],
      [{ allowed_domains: ['not a host'], tag: 'x' }, /allowed_domains\[0\]/],
      [{ allowed_domains: ['a.example'] }, /tag/],
    ] as const) {
      const r = await org.admin.post('/organizations/mitm-tokens', body);
      assert.equal(r.status, 400);
      assert.match(r.body.errors[0].message, message);
    }
    const extra = await org.admin.post('/organizations/mitm-tokens', { allowed_domains: ['other.example'], tag: 'temp' });
    assert.equal((await org.admin.delete(`/organizations/mitm-tokens/${extra.body.result.token}`)).status, 204);
    assert.equal((await org.admin.delete(`/organizations/mitm-tokens/${extra.body.result.token}`)).status, 404);
    assert.equal((await org.user.get('/organizations/mitm-tokens')).status, 401);
  });

  test('the image: always the same PNG, no-store, and a known token cannot be told from an unknown one', async () => {
    const known = await image({ Referer: 'https://evil.example/' });
    const unknown = await view(`${server.base}/mitm/no-such-token.png`, { Referer: 'https://evil.example/' });
    for (const r of [known, unknown]) {
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'image/png');
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal(r.headers.get('cross-origin-resource-policy'), 'cross-origin');
    }
    const [a, b] = [Buffer.from(await known.arrayBuffer()), Buffer.from(await unknown.arrayBuffer())];
    assert.deepEqual(a, b);
    assert.deepEqual([...a.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
  });

  test('a Referer host outside the allowed domains: MitmAttackDetected with every field; allowed hosts and wildcards: nothing', async () => {
    // The image answers before its detection commits: the previous test's evil.example view must be in the log
    // before a live subscription starts, or it would arrive as this test's first event.
    await waitFor(() => events(org.id, 'MitmAttackDetected_v1').length === 1, 10_000, "the previous test's detection to commit");
    const sub = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { types: 'MitmAttackDetected_v1' } });
    try {
      for (const ok of ['https://shop.example/login', 'https://www.shop.example/', 'https://a.b.shop.example/x?y=1']) {
        assert.equal((await image({ Referer: ok })).status, 200);
      }
      assert.equal((await image({ Referer: 'https://phish.test:8443/' })).status, 200);
      await sub.waitForCount(1);
      const event = sub.frames[0]?.event;
      assert.equal(event.event_metadata.event_name, 'MitmAttackDetected_v1');
      assert.equal(event.event_metadata.source, 'Cloud');
      assert.equal(event.event_metadata.organization_id, org.id);
      const { event_metadata, ...fields } = event;
      assert.deepEqual(fields, {
        client_ip_address: '127.0.0.1',
        user_agent: 'victim-browser/1',
        mitm_domain: 'phish.test',
        allowed_domains: ['shop.example', '*.shop.example'],
        token_tag: 'main shop',
        mitm_token: token,
      });
      // Without a Referer the Origin names the host; a host that only ends like an allowed one is not allowed.
      await image({ Origin: 'https://evilshop.example' });
      await sub.waitForCount(2);
      assert.equal(sub.frames[1]?.event.mitm_domain, 'evilshop.example');
    } finally {
      await sub.close();
    }
  });

  test('detections are rate-limited per token, address and host; the statistics count every view', async () => {
    const before = events(org.id, 'MitmAttackDetected_v1').filter((e) => e['mitm_domain'] === 'flood.test').length;
    for (let i = 0; i < 6; i++) await image({ Referer: 'https://flood.test/' });
    await image();
    // A marker on another host is recorded after the flood's: when it is there, so is everything before it.
    await image({ Referer: 'https://marker.test/' });
    const sub = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { from: '1', types: 'MitmAttackDetected_v1' } });
    await sub.waitUntil(() => sub.frames.some((f) => f.event.mitm_domain === 'marker.test'));
    await sub.close();
    assert.equal(events(org.id, 'MitmAttackDetected_v1').filter((e) => e['mitm_domain'] === 'flood.test').length - before, 2);

    const stats = await org.admin.get('/stats/mitm');
    assert.equal(stats.status, 200);
    const byDomain = Object.fromEntries(stats.body.result.map((s: any) => [s.mitm_domain, s]));
    assert.deepEqual(byDomain['flood.test'], { mitm_domain: 'flood.test', view_count: 6, unique_ip_count: 1, token_tag: 'main shop', allowed_domains: ['shop.example', '*.shop.example'] });
    assert.equal(byDomain['unknown']?.view_count, 1);
    assert.equal(byDomain['shop.example'], undefined, 'views from allowed hosts are no detections');
    const past = await org.admin.get('/stats/mitm?start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z');
    assert.equal(past.status, 200, past.text);
    assert.deepEqual(past.body.result, []);
    assert.equal((await org.admin.get('/stats/mitm?start=yesterday')).status, 400);
  });
});
