// A small Prometheus registry: counters, gauges and histograms with labels, rendered as text format 0.0.4.
// A label set can be bound once to a handle, so that a hot path counts without building label strings.
type Labels = Record<string, string>;

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels: Labels) => {
  const keys = Object.keys(labels);
  return keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escape(labels[k] as string)}"`).join(',')}}`;
};

export interface BoundCounter {
  inc(by?: number): void;
}
export interface Counter {
  inc(labels?: Labels, by?: number): void;
  /** the series of one label set; it appears in the output once first incremented */
  bind(labels?: Labels): BoundCounter;
}
export interface Gauge {
  set(value: number, labels?: Labels): void;
  /** forgets every label set, so that a collector can set only the series that exist now */
  reset(): void;
}
export interface BoundHistogram {
  observe(seconds: number): void;
}
export interface Histogram {
  observe(seconds: number, labels?: Labels): void;
  /** the series of one label set; it appears in the output once it has a first observation */
  bind(labels?: Labels): BoundHistogram;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

interface Series {
  labels: Labels;
  /** per bucket, the observations that fell into it and no lower bucket; cumulated when rendered */
  counts: number[];
  sum: number;
  count: number;
}

export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export class Metrics {
  private readonly families: Family[] = [];
  private readonly collectors: Array<() => void> = [];

  counter(name: string, help: string): Counter {
    const values = new Map<string, { value: number }>();
    this.families.push({ name, help, type: 'counter', render: () => [...values].map(([l, c]) => `${name}${l} ${c.value}`) });
    const cell = (key: string) => {
      let c = values.get(key);
      if (!c) values.set(key, (c = { value: 0 }));
      return c;
    };
    return {
      inc(labels = {}, by = 1) {
        cell(labelText(labels)).value += by;
      },
      bind(labels = {}) {
        const key = labelText(labels);
        let c: { value: number } | undefined;
        return {
          inc(by = 1) {
            (c ??= cell(key)).value += by;
          },
        };
      },
    };
  }

  gauge(name: string, help: string): Gauge {
    const values = new Map<string, number>();
    this.families.push({ name, help, type: 'gauge', render: () => [...values].map(([l, v]) => `${name}${l} ${v}`) });
    return { set: (value, labels = {}) => void values.set(labelText(labels), value), reset: () => values.clear() };
  }

  histogram(name: string, help: string, buckets = LATENCY_BUCKETS): Histogram {
    const series = new Map<string, Series>();
    const renderSeries = (s: Series) => {
      let cumulative = 0;
      return [
        ...buckets.map((b, i) => `${name}_bucket${labelText({ ...s.labels, le: String(b) })} ${(cumulative += s.counts[i] as number)}`),
        `${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`,
        `${name}_sum${labelText(s.labels)} ${s.sum}`,
        `${name}_count${labelText(s.labels)} ${s.count}`,
      ];
    };
    this.families.push({ name, help, type: 'histogram', render: () => [...series.values()].flatMap(renderSeries) });
    const get = (labels: Labels) => {
      const key = labelText(labels);
      let s = series.get(key);
      if (!s) series.set(key, (s = { labels, counts: buckets.map(() => 0), sum: 0, count: 0 }));
      return s;
    };
    const observe = (s: Series, seconds: number) => {
      // The first bucket that holds the value; a value above the last bucket counts only in +Inf.
      let i = 0;
      while (i < buckets.length && !(seconds <= (buckets[i] as number))) i++;
      if (i < buckets.length) (s.counts[i] as number)++;
      s.sum += seconds;
      s.count++;
    };
    return {
      observe(seconds, labels = {}) {
        observe(get(labels), seconds);
      },
      bind(labels = {}) {
        let s: Series | undefined;
        return {
          observe(seconds) {
            observe((s ??= get(labels)), seconds);
          },
        };
      },
    };
  }

  /** fn runs before each render, to set gauges from live state */
  collect(fn: () => void): void {
    this.collectors.push(fn);
  }

  render(): string {
    for (const c of this.collectors) c();
    return this.families.map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.render()].join('\n')).join('\n') + '\n';
  }
}
