// What every benchmark's command line shares: numeric flags checked with a useful message, and running the
// file directly (npx tsx bench/x.ts) as well as through bench/run.ts (npm run bench -- x).
import { pathToFileURL } from 'node:url';

/** A flag's value as a number ≥ min, or an error that names the flag and shows the usage. */
export function numberFlag(name: string, raw: string, min: number, usage: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${raw}"\n${usage}`);
  return n;
}

/** An error as the one line a person at the terminal needs, with a pointer to --help for a mistyped flag. */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS') ? `${message} (--help lists the options)` : message;
}

/** Runs main(argv) when this module is the script node was started with; exits 1 with the message on failure. */
export function runIfMain(moduleUrl: string, main: (argv: string[]) => Promise<void>): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(describeError(error));
    process.exit(1);
  });
}
