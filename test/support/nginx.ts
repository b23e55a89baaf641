// Debian's nginx in front of a test's service: the documented configuration (docs/operations.md), on loopback ports, under its own
// temporary prefix with its own pid file, stopped by that pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { removeDir, tempDir } from './server.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

export const nginxInstalled = NGINX !== undefined;

/** The nginx block of docs/operations.md ("Behind a reverse proxy"), its upstream and listen addresses replaced. */
export function documentedNginxConfig(operations: string, upstreamPort: number, listenPort: number): string {
  const section = operations.slice(operations.indexOf('## Behind a reverse proxy'));
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/operations.md: no nginx block under "Behind a reverse proxy"');
  const upstream = 'server 127.0.0.1:8080;';
  const listen = 'listen 80;';
  if (!block.includes(upstream) || !block.includes(listen)) throw new Error(`docs/operations.md's nginx block no longer has "${upstream}" and "${listen}"`);
  return block.replace(upstream, `server 127.0.0.1:${upstreamPort};`).replace(listen, `listen 127.0.0.1:${listenPort};`);
}

export interface Nginx {
  base: string;
  stop(): Promise<void>;
}

/** Starts nginx with `httpBlock` inside a main configuration of its own; resolves once it accepts connections. */
export async function startNginx(httpBlock: string, listenPort: number): Promise<Nginx> {
  if (NGINX === undefined) throw new Error('nginx is not installed (apt-get install nginx; .ci/run does)');
  const prefix = tempDir('identity-nginx-');
  const pidFile = join(prefix, 'nginx.pid');
  const conf = join(prefix, 'nginx.conf');
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${join(prefix, t)};`).join('\n');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${pidFile};
error_log ${join(prefix, 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log off;
${temps}
${httpBlock}
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', prefix, '-c', conf, '-e', join(prefix, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const log = () => `${stderr}${existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8') : ''}`;

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${log()}`);
    if (existsSync(pidFile) && (await accepts(listenPort))) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not accept connections within 30 s: ${log()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return {
    base: `http://127.0.0.1:${listenPort}`,
    async stop() {
      // The master's pid, from its own pid file: SIGQUIT is nginx's graceful stop, SIGKILL if it lingers.
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      removeDir(prefix);
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}
