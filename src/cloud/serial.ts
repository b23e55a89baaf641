// One queue per organization in front of its actor for changes made at a provider: each runs alone, from
// the provider call to the commit of its event, so a change and its event cannot be reordered against the
// organization's other cloud changes (or a connection changed or deleted meanwhile).
export interface SerialQueue {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
}

export function createSerialQueue(): SerialQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(key, work) {
      const before = tails.get(key) ?? Promise.resolve();
      const result = before.then(work, work);
      const tail = result.catch(() => undefined);
      tails.set(key, tail);
      // The map holds only organizations with work queued.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
