// A link's estimate of its own round trip (send to acknowledgement), from what it measures, never from
// what a transport was configured with: Jacobson's smoothed mean and mean deviation, as TCP keeps them.

export interface RoundTrip {
  /** One measured round trip, ms. */
  sample(ms: number): void;
  /** How long a round trip may take before it is late: the mean plus four deviations; 0 before any sample. */
  bound(): number;
  /** the smoothed mean, ms (0 before any sample) */
  mean(): number;
}

export function createRoundTrip(): RoundTrip {
  let srtt = 0;
  let rttvar = 0;
  let sampled = false;
  return {
    sample(ms) {
      const r = Math.max(0, ms);
      if (!sampled) {
        sampled = true;
        srtt = r;
        rttvar = r / 2;
        return;
      }
      rttvar = 0.75 * rttvar + 0.25 * Math.abs(srtt - r);
      srtt = 0.875 * srtt + 0.125 * r;
    },
    bound: () => srtt + 4 * rttvar,
    mean: () => srtt,
  };
}
