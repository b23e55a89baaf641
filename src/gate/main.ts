// Gate's entry point: `npm run gate -- --config gate.yaml [--config more.json]`; the only place Gate reads process.env.
import { GateConfigError, loadGateConfig } from './config.js';
import { startGate } from './gate.js';

function configFiles(argv: readonly string[]): string[] {
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--config' || a === '-c') {
      const f = argv[++i];
      if (f === undefined) throw new GateConfigError('--config needs a file');
      files.push(f);
    } else if (a.startsWith('--config=')) {
      files.push(a.slice('--config='.length));
    } else {
      throw new GateConfigError(`unknown argument "${a}" (usage: gate --config gate.yaml [--config more.json])`);
    }
  }
  return files;
}

try {
  const config = loadGateConfig(configFiles(process.argv.slice(2)), process.env);
  const gate = await startGate(config, { log: (m) => console.log(m) });
  const stop = () => {
    void gate.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  console.error(error instanceof GateConfigError || error instanceof Error ? `gate: ${error.message}` : error);
  process.exit(1);
}
