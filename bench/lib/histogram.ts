// A latency histogram in the manner of HdrHistogram: exact below 128 µs, then log-linear buckets with 64
// sub-buckets per power of two, so any recorded value is off by less than 1/64 (1.6%) and recording is O(1)
// with no allocation. Values are microseconds; percentiles report the top of their bucket, as HDR does.
const SUB_BITS = 7;
const SUB = 1 << SUB_BITS; // 128
const HALF = SUB >> 1; // 64
const MAX_US = 2 ** 31 - 1; // about 36 minutes

function indexOf(us: number): number {
  if (us < SUB) return us;
  const shift = 31 - Math.clz32(us) - SUB_BITS + 1;
  return shift * HALF + (us >>> shift);
}

/** The highest value that falls in bucket i. */
function highestOf(i: number): number {
  if (i < SUB) return i;
  const shift = Math.floor(i / HALF) - 1;
  const mantissa = i - shift * HALF;
  return (mantissa + 1) * 2 ** shift - 1;
}

export interface LatencySummary {
  count: number;
  min_us: number;
  mean_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

export class Histogram {
  private readonly counts = new Float64Array(indexOf(MAX_US) + 1);
  private n = 0;
  private sum = 0;
  private lo = Infinity;
  private hi = 0;

  /** Records one latency given in microseconds (rounded; clamped to 0 … ~36 min). */
  record(us: number): void {
    const v = Math.min(MAX_US, Math.max(0, Math.round(us)));
    this.counts[indexOf(v)]!++;
    this.n++;
    this.sum += v;
    if (v < this.lo) this.lo = v;
    if (v > this.hi) this.hi = v;
  }

  get count(): number {
    return this.n;
  }

  /** The value at or below which `p` percent of the recorded values lie (0 < p ≤ 100). */
  percentile(p: number): number {
    if (this.n === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.n));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i] as number;
      if (seen >= rank) return Math.min(highestOf(i), this.hi);
    }
    return this.hi;
  }

  merge(other: Histogram): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i] as number;
    this.n += other.n;
    this.sum += other.sum;
    this.lo = Math.min(this.lo, other.lo);
    this.hi = Math.max(this.hi, other.hi);
  }

  reset(): void {
    this.counts.fill(0);
    this.n = 0;
    this.sum = 0;
    this.lo = Infinity;
    this.hi = 0;
  }

  summary(): LatencySummary {
    return {
      count: this.n,
      min_us: this.n === 0 ? 0 : this.lo,
      mean_us: this.n === 0 ? 0 : Math.round(this.sum / this.n),
      p50_us: this.percentile(50),
      p90_us: this.percentile(90),
      p99_us: this.percentile(99),
      p999_us: this.percentile(99.9),
      max_us: this.hi,
    };
  }
}
