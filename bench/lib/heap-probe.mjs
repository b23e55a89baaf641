// Preloaded into a service under the scale benchmark (node --expose-gc --import ./bench/lib/heap-probe.mjs): on
// SIGUSR2 it collects garbage and prints one line of process.memoryUsage(), so the heap is read after a full GC,
// with the longest event-loop block since the last probe (a snapshot encoded on the loop shows there).
// Plain JavaScript because node loads it before tsx is registered.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
process.on('SIGUSR2', () => {
  const loopMaxMs = Math.round(delay.max / 1e6);
  delay.reset();
  globalThis.gc?.();
  globalThis.gc?.();
  console.log(`heap-probe ${JSON.stringify({ ...process.memoryUsage(), loopMaxMs })}`);
});
