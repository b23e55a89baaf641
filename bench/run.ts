// `npm run bench -- <name> [options]`: runs one benchmark of bench/, each also runnable alone with tsx.
const BENCHES: Record<string, () => Promise<{ main(argv: string[]): Promise<void> }>> = {
  http: () => import('./http.js'),
};

const [name, ...argv] = process.argv.slice(2);
if (name === undefined || !(name in BENCHES)) {
  console.error(`usage: npm run bench -- <name> [options], name one of: ${Object.keys(BENCHES).join(', ')}; <name> --help for its options`);
  process.exit(name === undefined ? 0 : 2);
}
try {
  const bench = await (BENCHES[name] as () => Promise<{ main(argv: string[]): Promise<void> }>)();
  await bench.main(argv);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
