// Preloaded into a server under the mint-costs benchmark (node --expose-gc --trace-gc-nvp --import ./bench/lib/gc-mark.mjs):
// on SIGUSR2 it collects garbage and prints "gc-mark", so that the --trace-gc-nvp lines between two marks count
// exactly the bytes allocated in between (each GC line counts those since the GC before it).
// Plain JavaScript because node loads it before tsx is registered.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  console.log('gc-mark');
});
