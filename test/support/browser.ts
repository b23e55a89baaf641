// Debian's chromium for the browser tests, driven by playwright-core: a headless browser on a fresh profile,
// and screenshots checked to be PNGs.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's build from apt, never one a test tool downloads (this machine's network would refuse it anyway). */
const CHROMIUM = '/usr/bin/chromium';
// Root needs --no-sandbox; the rest keep chromium from calling out to Google's services, which a closed
// network refuses many times over at every start.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Generous: chromium starts slowly on a busy two-core machine. Nothing asserts a duration. */
const STEP_MS = Number(process.env['STEP_MS'] ?? 60_000);

/**
 * A headless chromium with a new, empty profile in `dir`; a missing chromium fails the test, never skips it.
 * `hosts`: more host names the browser may reach, all resolved to 127.0.0.1 (distinct sites on loopback).
 */
export async function launchBrowser(dir: string, options: { hosts?: readonly string[] } = {}): Promise<BrowserContext> {
  const hosts = options.hosts ?? [];
  if (!existsSync(CHROMIUM)) {
    assert.fail(`Debian's chromium is not installed (${CHROMIUM} is missing): install it with \`apt-get install chromium\` (.ci/run installs it when missing)`);
  }
  const context = await chromium.launchPersistentContext(mkdtempSync(join(dir, 'profile-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: hosts.length === 0 ? CHROMIUM_ARGS : [...CHROMIUM_ARGS, `--host-resolver-rules=${hosts.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`],
    timeout: STEP_MS,
  });
  // Loopback only: the OpenID provider's development pages import a web font, which a closed network would
  // leave hanging; nothing the tests need lives anywhere else.
  await context.route((url) => url.hostname !== '127.0.0.1' && !hosts.includes(url.hostname), (route) => route.abort('blockedbyclient'));
  context.setDefaultTimeout(STEP_MS);
  context.setDefaultNavigationTimeout(STEP_MS);
  return context;
}

/** Photographs the page into the test's folder and checks that a PNG arrived. */
export async function screenshot(t: TestContext, page: Page, path: string): Promise<void> {
  await page.screenshot({ path, fullPage: true });
  assertPng(path);
  t.diagnostic(`screenshot: ${path}${process.env['KEEP_SCREENSHOTS'] === '1' ? '' : ' (removed after the run; KEEP_SCREENSHOTS=1 keeps it)'}`);
}

function assertPng(path: string): void {
  assert.ok(existsSync(path), `no screenshot at ${path}`);
  const bytes = readFileSync(path);
  assert.ok(bytes.length > PNG_SIGNATURE.length, `${path} is empty`);
  assert.deepEqual(bytes.subarray(0, PNG_SIGNATURE.length), PNG_SIGNATURE, `${path} is not a PNG`);
}

/** Polls `get` every 50 ms until it gives a value (what the page or the service did), or fails naming `what`. */
export async function until<T>(what: string, get: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
