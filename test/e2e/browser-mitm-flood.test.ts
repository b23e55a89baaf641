// The phishing-detection image is public and its Referer is the caller's to choose: a fresh host per request
// used to record a MitmAttackDetected event (a WAL entry, webhooks, the stream) for every one. Detections are
// limited per token and window whatever the host, the rest are counted, and what is recorded is truncated.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { waitFor } from '../support/regions.js';
import { startTestServer, type TestServer } from '../support/server.js';

const PER_TOKEN = 20;
let server: TestServer;
let org: Org;
let events: ReturnType<typeof recordEvents>;
before(async () => {
  server = await startTestServer({ SERVICE_MITM_RATE_PER_TOKEN: String(PER_TOKEN), SERVICE_MITM_RATE_WINDOW: '3600' });
  org = await newOrg(server, 'mitm-flood');
  events = recordEvents(server);
});
after(() => server.stop());

test('3,000 image requests with distinct Referer hosts record at most the per-token limit of detections, and count the rest', async () => {
  const made = await org.admin.post('/organizations/mitm-tokens', { allowed_domains: ['shop.example'], tag: 'flood' });
  assert.equal(made.status, 201, made.text);
  const imageUrl = made.body.result.image_url as string;
  const dispatcher = new Agent({ connections: 8 });
  const longHost = `${'h'.repeat(60)}.`.repeat(20);
  try {
    const first = await fetch(imageUrl, { dispatcher, headers: { Referer: `https://${longHost}phish.test/`, 'User-Agent': 'u'.repeat(5000) } });
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    for (let batch = 0; batch < 30; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const res = await fetch(imageUrl, { dispatcher, headers: { Referer: `https://fresh-${batch}-${i}.phish.test/` } });
          assert.equal(res.status, 200);
          await res.arrayBuffer();
        }),
      );
    }
  } finally {
    await dispatcher.close();
  }
  // The detections are recorded after the image is answered; the suppressed are counted before it is.
  await waitFor(() => events(org.id, 'MitmAttackDetected_v1').length >= PER_TOKEN, 10_000, 'the detections to commit');
  const detected = events(org.id, 'MitmAttackDetected_v1');
  assert.equal(detected.length, PER_TOKEN);
  const truncated = detected[0] as Record<string, string>;
  assert.ok(truncated['user_agent'] !== undefined && truncated['user_agent'].length <= 256, `user_agent of ${truncated['user_agent']?.length} characters recorded`);
  assert.ok((truncated['mitm_domain'] as string).length <= 253, `mitm_domain of ${truncated['mitm_domain']?.length} characters recorded`);
  const metrics = (await server.client.get('/metrics')).text;
  assert.match(metrics, new RegExp(`^mitm_detections_suppressed_total ${3001 - PER_TOKEN}$`, 'm'));
});
