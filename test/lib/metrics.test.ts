// The Prometheus registry: bound handles count into the same series as labelled calls, and histograms
// render cumulative buckets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../src/lib/metrics.js';

const lines = (m: Metrics) => m.render().split('\n');

test('a bound counter and labelled inc() share one series, which appears only once counted', () => {
  const m = new Metrics();
  const c = m.counter('reqs_total', 'requests');
  const bound = c.bind({ route: '/a', status: '200' });
  assert.ok(!m.render().includes('reqs_total{'), 'a bound series is absent until counted');
  bound.inc();
  bound.inc(2);
  c.inc({ route: '/a', status: '200' });
  c.inc({ route: '/b', status: '404' }, 5);
  assert.ok(lines(m).includes('reqs_total{route="/a",status="200"} 4'));
  assert.ok(lines(m).includes('reqs_total{route="/b",status="404"} 5'));
});

test('a histogram renders cumulative buckets, +Inf, sum and count, bound or not', () => {
  const m = new Metrics();
  const h = m.histogram('lat_seconds', 'latency', [0.1, 1]);
  const bound = h.bind({ route: '/a' });
  assert.ok(!m.render().includes('lat_seconds_count{'), 'a bound series is absent until observed');
  bound.observe(0.05);
  bound.observe(0.1);
  h.observe(0.5, { route: '/a' });
  h.observe(7, { route: '/a' });
  const out = lines(m);
  for (const expected of [
    'lat_seconds_bucket{route="/a",le="0.1"} 2',
    'lat_seconds_bucket{route="/a",le="1"} 3',
    'lat_seconds_bucket{route="/a",le="+Inf"} 4',
    'lat_seconds_sum{route="/a"} 7.65',
    'lat_seconds_count{route="/a"} 4',
  ]) {
    assert.ok(out.includes(expected), `${expected} in\n${out.join('\n')}`);
  }
});
