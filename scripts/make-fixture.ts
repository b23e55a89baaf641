// Writes a small data dir with the code as it is checked out, for the upgrade test of the next format change:
// `FIXTURE_COMMIT=$(git rev-parse --short HEAD) npx tsx scripts/make-fixture.ts test/fixtures/data-v<N>`. It holds a snapshot and WAL entries after it, a
// replica region's store, persons with handles, groups and attributes, a password, minted tokens, a webhook
// and a suborganization; expected.json beside it says what a later version must still find there.
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/service.js';

export const FIXTURE_ENV = {
  SERVICE_ROOT_ORG_ID: 'fixture-root',
  SERVICE_ROOT_API_KEY: 'fixture-root-key-0123456789',
  // Fixed, so that tokens minted now carry the issuer the test's server has on another port.
  SERVICE_ISSUER: 'https://identity.fixture.example',
  SERVICE_REGIONS: 'europe-belgium,us-iowa',
  // Small, so that the root organization has a snapshot and WAL entries after it.
  SERVICE_SNAPSHOT_INTERVAL: '8',
  SERVICE_TOKEN_TTL: String(366 * 86_400),
  SERVICE_SIGNING_THREADS: '0',
};

async function main(): Promise<void> {
  const target = resolve(process.argv[2] ?? 'test/fixtures/data-v0');
  const dataDir = mkdtempSync(join(tmpdir(), 'identity-fixture-'));
  const config = loadConfig({ ...FIXTURE_ENV, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir });
  const service = await startService(config, { log: () => {}, warn: (m) => console.warn(`warning: ${m}`) });
  const base = `http://127.0.0.1:${service.port}`;

  async function call(orgId: string, apiKey: string, method: string, path: string, body?: unknown): Promise<any> {
    const headers: Record<string, string> = { 'Service-OrgID': orgId };
    if (apiKey !== '') headers['Service-API-Key'] = apiKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as { result: unknown }).result;
  }
  const root = (method: string, path: string, body?: unknown) => call(FIXTURE_ENV.SERVICE_ROOT_ORG_ID, FIXTURE_ENV.SERVICE_ROOT_API_KEY, method, path, body);

  try {
    await root('POST', '/groups', { name: 'staff', description: 'people who work here' });
    await root('POST', '/groups', { name: 'admins' });
    const persons: string[] = [];
    for (let i = 0; i < 4; i++) {
      const p = await root('POST', '/persons', {
        handles: [{ type: 'email_address', value: `person${i}@example.com` }, { type: 'username', value: `person${i}` }],
        groups: i === 0 ? ['staff', 'admins'] : ['staff'],
      });
      persons.push(p.person_id as string);
    }
    const [first, second] = persons as [string, string];
    await root('PUT', `/persons/${first}/attributes/end_user_read_write`, { locale: 'en-GB', theme: 'dark' });
    await root('PUT', '/organizations/attributes/end_user_read_only', { plan: 'pro' });
    await root('PUT', `/persons/${second}/credentials/password`, { password: 'correct horse battery staple' });
    const webhook = await root('POST', '/organizations/webhooks', { name: 'audit', target_url: 'https://hooks.example.com/audit' });
    // A trigger for an event nothing here emits: no delivery is attempted, but the trigger is in the state.
    await root('POST', `/organizations/webhooks/${webhook.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonDeleted_v1' });
    const minted = (await root('POST', `/persons/${first}/mint-token`, { custom_claims: { fixture: true } })) as string;
    const signedIn = await call(FIXTURE_ENV.SERVICE_ROOT_ORG_ID, '', 'POST', '/authenticate/password', {
      handle: { type: 'email_address', value: 'person1@example.com' },
      password: 'correct horse battery staple',
    });
    const sub = await root('POST', '/organizations/suborganizations', { sub_org_name: 'fixture-sub' });
    const subPerson = await call(sub.id, sub.api_key, 'POST', '/persons', { handles: [{ type: 'email_address', value: 'sub@example.com' }] });
    await root('PATCH', `/persons/${persons[3]}`, { active: false });

    const organization = await root('GET', '/organizations');
    // Stopped only once the replica has every entry, so that its store is a complete copy.
    let health: { result: { regions: Array<{ name: string; state: string; lag_entries: number }> } };
    for (let tries = 0; ; tries++) {
      health = (await (await fetch(`${base}/health`)).json()) as typeof health;
      if (health.result.regions.every((r) => r.state === 'local' || (r.state === 'streaming' && r.lag_entries === 0))) break;
      if (tries > 200) throw new Error(`the replica did not catch up: ${JSON.stringify(health.result.regions)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const head = service.registry.get(FIXTURE_ENV.SERVICE_ROOT_ORG_ID)?.durableEventOffset ?? 0;
    const tokens = [minted, (signedIn as { token: string }).token].map((t) => {
      const payload = JSON.parse(Buffer.from(String(t).split('.')[1] as string, 'base64url').toString('utf8')) as { jti: string; sub: string; exp: number };
      return { token: t, jti: payload.jti, sub: payload.sub, exp: payload.exp };
    });
    const expected = {
      written_by: process.env['FIXTURE_COMMIT'] ?? 'unknown',
      env: FIXTURE_ENV,
      root: { id: FIXTURE_ENV.SERVICE_ROOT_ORG_ID, api_key: FIXTURE_ENV.SERVICE_ROOT_API_KEY, organization },
      persons,
      inactive: persons[3],
      groups: ['admins', 'staff'],
      webhook: webhook.id,
      tokens,
      sub: { id: sub.id, api_key: sub.api_key, person: subPerson.person_id },
      root_event_count: head,
      root_wal_offset: service.registry.get(FIXTURE_ENV.SERVICE_ROOT_ORG_ID)?.state.offset,
      regions_at_stop: health.result.regions,
    };
    await service.stop();

    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    // The lock files are per process; everything else is the data dir as the service left it.
    for (const name of readdirSync(dataDir)) if (!name.endsWith('-lock')) cpSync(join(dataDir, name), join(target, name));
    writeFileSync(join(target, '..', `${target.split('/').pop()}.json`), `${JSON.stringify(expected, null, 2)}\n`);
    for (const name of readdirSync(target)) console.log(`${name}: ${statSync(join(target, name)).size} bytes`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
