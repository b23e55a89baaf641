import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForbiddenAddressError, createAddressGuard, type Resolver } from '../../src/lib/address-guard.js';

const FORBIDDEN = [
  '127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255',
  '224.0.0.1', '239.255.255.250', '0.0.0.0', '255.255.255.255',
  '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2002:c0a8:101::1',
];
const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '100.128.0.1', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::'];

const resolverOf = (table: Record<string, string[]>, calls: string[] = []): Resolver => async (host) => {
  calls.push(host);
  const addresses = table[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

test('loopback, private, link-local, CGNAT, multicast and unspecified addresses are forbidden, in every IPv6 form', () => {
  const guard = createAddressGuard({ allowInsecure: false, resolver: resolverOf({}) });
  for (const a of FORBIDDEN) assert.equal(guard.isForbidden(a), true, a);
  for (const a of PUBLIC) assert.equal(guard.isForbidden(a), false, a);
  assert.equal(guard.isForbidden('not-an-ip'), true);
});

test('a name is resolved and only a public address is returned to connect to', async () => {
  const calls: string[] = [];
  const guard = createAddressGuard({
    allowInsecure: false,
    resolver: resolverOf({ 'rebind.test': ['127.0.0.1'], 'mixed.test': ['10.0.0.1', '93.184.216.34'], 'v6.test': ['::1', 'fe80::1'] }, calls),
  });
  await assert.rejects(guard.resolve('rebind.test'), ForbiddenAddressError);
  await assert.rejects(guard.resolve('v6.test'), ForbiddenAddressError);
  assert.equal(await guard.resolve('mixed.test'), '93.184.216.34');
  assert.deepEqual(calls, ['rebind.test', 'v6.test', 'mixed.test']);
});

test('IP literals are checked without a lookup, bracketed IPv6 included', async () => {
  const calls: string[] = [];
  const guard = createAddressGuard({ allowInsecure: false, resolver: resolverOf({}, calls) });
  await assert.rejects(guard.resolve('127.0.0.1'), ForbiddenAddressError);
  await assert.rejects(guard.resolve('[::1]'), ForbiddenAddressError);
  await assert.rejects(guard.resolve('::ffff:169.254.169.254'), ForbiddenAddressError);
  assert.equal(await guard.resolve('8.8.8.8'), '8.8.8.8');
  assert.deepEqual(calls, []);
});

test('allowing insecure targets lets loopback through; lookup failures still fail', async () => {
  const guard = createAddressGuard({ allowInsecure: true, resolver: resolverOf({ 'rebind.test': ['127.0.0.1'] }) });
  assert.equal(await guard.resolve('rebind.test'), '127.0.0.1');
  assert.equal(await guard.resolve('[::1]'), '::1');
  await assert.rejects(guard.resolve('missing.test'), /ENOTFOUND/);
});
