// Test data for the benchmarks that read or mint for persons: created through the API, as a client would.
import type { ServiceProcess } from './server-process.js';

/**
 * Creates `count` persons, 50 requests at a time, and returns their IDs (person i at index i).
 * `extra(i)` adds fields to person i's body (e.g. attributes); each gets the handle bench-<i>@example.com.
 */
export async function createPersons(service: ServiceProcess, count: number, extra: (i: number) => Record<string, unknown> = () => ({})): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(50, count) }, async () => {
      while (next < count) {
        const i = next++;
        const res = await fetch(`${service.url}/persons`, {
          method: 'POST',
          headers: { ...service.auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ handles: [{ type: 'email_address', value: `bench-${i}@example.com` }], ...extra(i) }),
        });
        if (res.status !== 201) throw new Error(`creating person ${i}: ${res.status} ${await res.text()}`);
        ids[i] = ((await res.json()) as { result: { person_id: string } }).result.person_id;
      }
    }),
  );
  return ids;
}
