// Active Directory SPN changes through the service against a real Samba AD domain controller: SPN create,
// the holder's groups set and the SPN deleted, with their events against what the directory then holds; an
// SPN another account holds refused with the directory's own error; an inventory with the built-in holders.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'ldapts';
import { AD_BASE, AD_DOMAIN, AD_PASSWORD, SAMBA_MISSING, sambaPresent, startSamba, type Samba } from '../support/samba.js';
import { loggedEvents, loggedFrom, removeDir, startTestServer, type TestServer } from '../support/server.js';

const skip = sambaPresent() ? false : SAMBA_MISSING;
const ADMIN = 'Administrator@EXAMPLE.TEST';

describe('Active Directory SPNs through the service, against Samba AD DC', { skip }, () => {
  let samba: Samba;
  let server: TestServer;
  let dir: Client;
  let conn: string;

  const events = (name: string) => loggedEvents(server, name);
  const allCloudEvents = () => loggedFrom(server, 'Cloud');
  const spnsOf = async (dn: string) => {
    const r = await dir.search(dn, { scope: 'base', attributes: ['servicePrincipalName'] });
    const v = r.searchEntries[0]?.['servicePrincipalName'];
    return v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)];
  };
  const groupsOf = async (dn: string) => {
    const r = await dir.search(dn, { scope: 'base', attributes: ['memberOf'] });
    const v = r.searchEntries[0]?.['memberOf'];
    return (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]).map((g) => g.split(',')[0]!.slice(3)).sort();
  };
  const spns = (path = '') => `/cloud/connections/${conn}/ad/spns${path}`;

  before(async () => {
    samba = await startSamba();
    dir = new Client({ url: samba.url });
    await dir.bind(ADMIN, AD_PASSWORD);
    for (const name of ['svc-web', 'svc-other']) await dir.add(`CN=${name},CN=Users,${AD_BASE}`, { objectClass: ['top', 'person', 'organizationalPerson', 'user'], sAMAccountName: name });
    for (const name of ['app-readers', 'app-writers']) await dir.add(`CN=${name},CN=Users,${AD_BASE}`, { objectClass: ['top', 'group'], sAMAccountName: name });
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '0' });
    const r = await server.client.post('/cloud/connections', { name: 'corp', type: 'active_directory', config: { url: samba.url, base_dn: AD_BASE, domain: AD_DOMAIN }, credentials: { bind_dn: ADMIN, password: AD_PASSWORD } });
    assert.equal(r.status, 201, r.text);
    conn = r.body.result.connection_id;
  });
  after(async () => {
    await dir?.unbind().catch(() => undefined);
    await server?.stop();
    await samba?.stop();
    if (server) removeDir(server.dataDir);
  });

  test('a wrong password fails the connection test with the directory\'s own code', async () => {
    const r = await server.client.post('/cloud/connections', { name: 'bad', type: 'active_directory', config: { url: samba.url, base_dn: AD_BASE, domain: AD_DOMAIN }, credentials: { bind_dn: ADMIN, password: 'wrong' } });
    assert.equal(r.status, 400);
    assert.match(r.body.errors[0].message, /InvalidCredentials \(49\)/);
    assert.ok(!r.text.includes(AD_PASSWORD));
  });

  test('SPN create: ActiveDirectorySPNCreated_v1 names the account as the directory holds it', async () => {
    const r = await server.client.post(spns(), { account_name: 'svc-web', service_class: 'HTTP', service_name: 'web.example.test:8443' });
    assert.equal(r.status, 201, r.text);
    const dn = `CN=svc-web,CN=Users,${AD_BASE}`;
    assert.deepEqual(await spnsOf(dn), ['HTTP/web.example.test:8443']);
    const [e] = events('ActiveDirectorySPNCreated_v1');
    assert.deepEqual(
      { domain: e!['domain'], service_class: e!['service_class'], service_name: e!['service_name'], account_name: e!['account_name'], account_type: e!['account_type'], distinguished_name: e!['distinguished_name'] },
      { domain: AD_DOMAIN, service_class: 'HTTP', service_name: 'web.example.test:8443', account_name: 'svc-web', account_type: 'user', distinguished_name: dn },
    );
    assert.deepEqual(r.body.result, { domain: AD_DOMAIN, service_class: 'HTTP', service_name: 'web.example.test:8443', account_name: 'svc-web', account_type: 'user', distinguished_name: dn });
  });

  test("an SPN another account holds is refused with the directory's own error, and nothing is recorded", async () => {
    const before = allCloudEvents();
    const r = await server.client.post(spns(), { account_name: 'svc-other', service_class: 'HTTP', service_name: 'web.example.test:8443' });
    assert.equal(r.status, 409, r.text);
    assert.match(r.body.errors[0].message, /ConstraintViolation \(19\)/);
    assert.deepEqual(await spnsOf(`CN=svc-other,CN=Users,${AD_BASE}`), []);
    assert.equal(allCloudEvents(), before);
  });

  test('malformed SPNs and account names are refused by us before the directory is asked', async () => {
    const before = allCloudEvents();
    for (const [body, message] of [
      [{ account_name: 'svc-other', service_class: 'HT TP', service_name: 'x.example.test' }, /service_class/],
      [{ account_name: 'svc-other', service_class: 'HTTP', service_name: 'x.example.test:99999' }, /port/],
      [{ account_name: 'svc-other', service_class: 'HTTP', service_name: 'x/y' }, /service_name/],
      [{ account_name: 'bad*name', service_class: 'HTTP', service_name: 'x.example.test' }, /account_name/],
    ] as const) {
      const r = await server.client.post(spns(), body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, message);
    }
    assert.deepEqual(await spnsOf(`CN=svc-other,CN=Users,${AD_BASE}`), []);
    const missing = await server.client.post(spns(), { account_name: 'nobody', service_class: 'HTTP', service_name: 'x.example.test' });
    assert.equal(missing.status, 404);
    assert.equal(allCloudEvents(), before);
  });

  test("the holder's groups become the given set: ActiveDirectorySPNRoleUpdated_v1", async () => {
    const path = spns('/HTTP/web.example.test:8443/groups');
    assert.equal((await server.client.put(path, { groups: ['app-readers', 'app-writers'] })).status, 200);
    const dn = `CN=svc-web,CN=Users,${AD_BASE}`;
    assert.deepEqual(await groupsOf(dn), ['app-readers', 'app-writers']);
    const r = await server.client.put(path, { groups: ['app-writers'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await groupsOf(dn), ['app-writers']);
    const updated = events('ActiveDirectorySPNRoleUpdated_v1');
    assert.equal(updated.length, 2);
    assert.equal(updated[1]!['distinguished_name'], dn);
    assert.equal(updated[1]!['account_name'], 'svc-web');
    const unknown = await server.client.put(path, { groups: ['no-such-group'] });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await groupsOf(dn), ['app-writers']);
  });

  test('an inventory counts the domain\'s built-in SPN holders and computer accounts as non-human', async () => {
    const r = await server.client.post(`/cloud/connections/${conn}/snapshots`);
    assert.equal(r.status, 201, r.text);
    const all = await dir.search(AD_BASE, { filter: '(objectClass=user)', attributes: ['objectClass', 'servicePrincipalName', 'sAMAccountName'], paged: true });
    // ldapts gives an attribute the entry lacks as an empty list
    const holds = (v: unknown) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== '');
    const nonHuman = all.searchEntries.filter((e) => String(e['objectClass']).includes('computer') || holds(e['servicePrincipalName']));
    const names = nonHuman.map((e) => String(e['sAMAccountName']));
    assert.ok(names.includes('krbtgt') && names.some((n) => n.endsWith('$')) && names.includes('svc-web'), names.join(','));
    assert.equal(r.body.result.non_human_identities, nonHuman.length);
    assert.equal(r.body.result.user_identities, all.searchEntries.length - nonHuman.length);
    assert.equal(r.body.result.credentials, 0);
  });

  test('SPN delete: ActiveDirectorySPNDeleted_v1, and the value is gone', async () => {
    const r = await server.client.delete(spns('/HTTP/web.example.test:8443'));
    assert.equal(r.status, 204, r.text);
    assert.deepEqual(await spnsOf(`CN=svc-web,CN=Users,${AD_BASE}`), []);
    const [e] = events('ActiveDirectorySPNDeleted_v1');
    assert.equal(e!['account_name'], 'svc-web');
    assert.equal((await server.client.delete(spns('/HTTP/web.example.test:8443'))).status, 404);
  });
});
