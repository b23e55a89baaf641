import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram } from '../../bench/lib/histogram.js';

test('given values below 128 µs, then percentiles are exact', () => {
  const h = new Histogram();
  for (let v = 1; v <= 100; v++) h.record(v);
  assert.deepEqual([h.percentile(50), h.percentile(99), h.percentile(100)], [50, 99, 100]);
  assert.deepEqual(h.summary(), { count: 100, min_us: 1, mean_us: 51, p50_us: 50, p90_us: 90, p99_us: 99, p999_us: 100, max_us: 100 });
});

test('given a wide range of values, then every percentile is within 1/64 above the true one', () => {
  const h = new Histogram();
  const values = Array.from({ length: 200_000 }, (_, i) => Math.round(1.00005 ** i * 10));
  for (const v of values) h.record(v);
  values.sort((a, b) => a - b);
  for (const p of [1, 10, 50, 90, 99, 99.9, 99.99]) {
    const truth = values[Math.ceil((p / 100) * values.length) - 1] as number;
    const got = h.percentile(p);
    assert.ok(got >= truth && got <= truth * (1 + 1 / 64), `p${p}: ${got} for ${truth}`);
  }
  assert.equal(h.percentile(100), values.at(-1));
});

test('given the largest values, then buckets do not overflow', () => {
  const h = new Histogram();
  h.record(2 ** 31 - 1);
  h.record(1e12);
  assert.equal(h.percentile(50), 2 ** 31 - 1);
});

test('given two histograms, when merged, then the result is as if one had recorded both', () => {
  const a = new Histogram();
  const b = new Histogram();
  const both = new Histogram();
  for (let v = 0; v < 5000; v += 3) (v % 2 ? a : b).record(v), both.record(v);
  a.merge(b);
  assert.deepEqual(a.summary(), both.summary());
  a.reset();
  assert.equal(a.summary().count, 0);
});
