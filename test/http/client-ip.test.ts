// The client's address from the peer and X-Forwarded-For, given the trusted proxies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createClientIp } from '../../src/http/client-ip.js';
import { addressList as trustedProxyList } from '../../src/lib/address-list.js';

describe('client address', () => {
  const behind = createClientIp(trustedProxyList(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']));

  it('without trusted proxies, X-Forwarded-For is ignored', () => {
    assert.equal(createClientIp(undefined).of('127.0.0.1', '203.0.113.9'), '127.0.0.1');
  });

  it('from an untrusted peer, X-Forwarded-For is ignored', () => {
    assert.equal(behind.of('198.51.100.7', '203.0.113.9'), '198.51.100.7');
  });

  it('from a trusted peer, the rightmost address that is no trusted proxy', () => {
    assert.equal(behind.of('127.0.0.1', '203.0.113.9'), '203.0.113.9');
    assert.equal(behind.of('127.0.0.1', 'forged, 198.51.100.7, 10.1.2.3'), '198.51.100.7');
    assert.equal(behind.of('10.0.0.1', '10.0.0.2, 10.0.0.3'), '10.0.0.2', 'all trusted: the leftmost');
    assert.equal(behind.of('127.0.0.1', 'garbage'), '127.0.0.1', 'not an address: the last trusted hop');
    assert.equal(behind.of('127.0.0.1', undefined), '127.0.0.1');
  });

  it('uWS writes IPv6 in full; IPv4-mapped peers are IPv4', () => {
    assert.equal(behind.of('fd00:0000:0000:0000:0000:0000:0000:0001', '2001:db8::5'), '2001:db8::5');
    assert.equal(behind.of('0000:0000:0000:0000:0000:ffff:7f00:0001', '203.0.113.9'), '203.0.113.9');
    assert.equal(createClientIp(undefined).of('0000:0000:0000:0000:0000:ffff:c633:6407', undefined), '198.51.100.7');
  });

  it('SERVICE_TRUSTED_PROXIES: a bad entry stops the start', () => {
    assert.deepEqual(loadConfig({ SERVICE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,::1' }).trustedProxies, ['127.0.0.1', '10.0.0.0/8', '::1']);
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      assert.throws(() => loadConfig({ SERVICE_TRUSTED_PROXIES: bad }), (e: unknown) => e instanceof ConfigError && /SERVICE_TRUSTED_PROXIES/.test(e.message), bad);
    }
  });
});
