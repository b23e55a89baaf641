// The console's single-page application, bundled by esbuild from console/ at the repository's root: built
// once per process, in memory, on the first request for it (or at start by main.ts, which prints its size).
// Nothing is written to disk and nothing is fetched: Preact comes from node_modules.
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface ConsoleBundle {
  readonly html: Buffer;
  readonly js: Buffer;
  readonly css: Buffer;
  /** bytes of the three files, and gzip-compressed as a browser fetches them */
  readonly bytes: number;
  readonly gzipBytes: number;
}

const ENTRY = fileURLToPath(new URL('../../console/main.tsx', import.meta.url));

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<link rel="stylesheet" href="/console/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/console/app.js"></script>
</body>
</html>
`;

export async function buildConsole(): Promise<ConsoleBundle> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const find = (ext: string) => Buffer.from(result.outputFiles.find((f) => f.path.endsWith(ext))?.contents ?? new Uint8Array());
  const html = Buffer.from(HTML);
  const js = find('.js');
  const css = find('.css');
  const files = [html, js, css];
  return { html, js, css, bytes: files.reduce((n, f) => n + f.length, 0), gzipBytes: files.reduce((n, f) => n + gzipSync(f).length, 0) };
}

/** One build per process, shared by every request that arrives while it runs. */
export function consoleBundle(): () => Promise<ConsoleBundle> {
  let built: Promise<ConsoleBundle> | undefined;
  return () => {
    built ??= buildConsole();
    // A failed build is tried again on the next request rather than cached.
    built.catch(() => (built = undefined));
    return built;
  };
}
