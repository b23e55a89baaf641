// Preloaded into a service under the scale benchmark (node --expose-gc --import ./bench/lib/heap-probe.mjs): on
// SIGUSR2 it collects garbage and prints one line of process.memoryUsage(), so the heap is read after a full GC.
// Plain JavaScript because node loads it before tsx is registered.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  console.log(`heap-probe ${JSON.stringify(process.memoryUsage())}`);
});
