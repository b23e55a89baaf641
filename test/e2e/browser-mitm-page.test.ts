// Phishing detection in chromium: a legitimate site with the snippet, and a reverse proxy (the "phishing kit")
// relaying it verbatim from another host; the service sees the proxy's host through the image's Referer.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { launchBrowser, until } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('phishing detection through a reverse proxy, in chromium', () => {
  let dir: string;
  let server: TestServer;
  let org: Org;
  let browser: BrowserContext;
  let events: ReturnType<typeof recordEvents>;
  let legit: Server;
  let proxy: Server;
  let legitUrl: string;
  let phishUrl: string;
  let imageUrl: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mitm-browser-'));
    server = await startTestServer({ SERVICE_MITM_RATE_PER_KEY: '100' });
    events = recordEvents(server);
    org = await newOrg(server, 'shop');
    const created = await org.admin.post('/organizations/mitm-tokens', { allowed_domains: ['legit.test'], tag: 'sign-in page' });
    assert.equal(created.status, 201, created.text);
    imageUrl = created.body.result.image_url;
    const snippet = created.body.result.snippet as string;
    const pages: Record<string, string> = {
      '/': `<!doctype html><title>Sign in</title><h1>Sign in</h1>${snippet}`,
      '/img': `<!doctype html><title>Sign in</title><h1>Sign in</h1><img src="${imageUrl}" alt="">`,
      '/hidden': `<!doctype html><title>Sign in</title><h1>Sign in</h1><span style="display:none;background-image:url('${imageUrl}')"></span>`,
    };
    legit = createServer((req, res) => {
      const page = pages[(req.url ?? '/').split('?')[0] as string];
      if (!page) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
    });
    const legitPort = await listen(legit);
    // The phishing kit: every request relayed to the legitimate site, the answer relayed back unchanged, except
    // that /quiet/... pages go out under Referrer-Policy: no-referrer, as a kit that wants to hide would.
    proxy = createServer((req, res) => {
      const quiet = (req.url ?? '').startsWith('/quiet');
      const path = quiet ? (req.url ?? '/').slice('/quiet'.length) || '/' : (req.url ?? '/');
      const upstream = request({ host: '127.0.0.1', port: legitPort, path, method: req.method, headers: { ...req.headers, host: `legit.test:${legitPort}` } }, (up) => {
        res.writeHead(up.statusCode ?? 502, { ...up.headers, ...(quiet && { 'referrer-policy': 'no-referrer' }) });
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    const proxyPort = await listen(proxy);
    legitUrl = `http://legit.test:${legitPort}`;
    phishUrl = `http://phish.test:${proxyPort}`;
    browser = await launchBrowser(dir, { hosts: ['legit.test', 'phish.test'] });
  });
  after(async () => {
    await browser?.close();
    legit?.closeAllConnections();
    proxy?.closeAllConnections();
    await new Promise((r) => legit?.close(r));
    await new Promise((r) => proxy?.close(r));
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const detections = () => events(org.id, 'MitmAttackDetected_v1');

  /** Loads a page and tells whether the browser asked for the detection image. */
  async function visit(url: string): Promise<boolean> {
    const page = await browser.newPage();
    let fetched = false;
    page.on('request', (r) => {
      if (r.url() === imageUrl) fetched = true;
    });
    page.on('requestfinished', (r) => {
      if (r.url() === imageUrl) fetched = true;
    });
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(300);
    await page.close();
    return fetched;
  }

  test('the legitimate site: the image is fetched, nothing is detected', async () => {
    assert.equal(await visit(`${legitUrl}/`), true);
    // The phishing page that follows is the marker: once its detection is in, the legitimate view was handled.
    assert.equal(await visit(`${phishUrl}/`), true);
    const [detected] = await until('the detection', () => (detections().length > 0 ? detections() : undefined));
    assert.equal(detections().length, 1);
    const { event_metadata, ...fields } = detected as Record<string, any>;
    assert.equal(event_metadata.source, 'Cloud');
    assert.equal(fields['mitm_domain'], 'phish.test');
    assert.deepEqual(fields['allowed_domains'], ['legit.test']);
    assert.equal(fields['token_tag'], 'sign-in page');
    assert.equal(fields['client_ip_address'], '127.0.0.1');
    assert.match(fields['user_agent'], /HeadlessChrome/);
    assert.equal(fields['mitm_token'], imageUrl.split('/').pop()?.replace('.png', ''));
  });

  test('under Referrer-Policy: no-referrer the CSS background is still detected; an <img> is not, and display:none never fetches', async () => {
    const before = detections().length;
    assert.equal(await visit(`${phishUrl}/quiet/`), true);
    await until('the no-referrer detection', () => (detections().length === before + 1 ? true : undefined));
    assert.equal(detections().at(-1)?.['mitm_domain'], 'phish.test');

    // The <img> variant loses its Referer: a view without a host, counted but not detected.
    assert.equal(await visit(`${phishUrl}/quiet/img`), true);
    assert.equal(await visit(`${phishUrl}/hidden`), false, 'a display: none element never fetches its background');
    // A last detected view orders the checks: everything before it has been handled.
    assert.equal(await visit(`${phishUrl}/`), true);
    await until('the last detection', () => (detections().length === before + 2 ? true : undefined));
    const counts = (await org.admin.get('/stats/mitm')).body.result as Array<{ mitm_domain: string; view_count: number }>;
    assert.deepEqual(Object.fromEntries(counts.map((c) => [c.mitm_domain, c.view_count])), { 'phish.test': 3, unknown: 1 });
  });
});
