// The events bench's subscribers, all in one child process of their own: apart from the writers' load generator,
// so a subscriber's work never stalls a writer's event loop, and its CPU time is read apart. The parent opens a
// phase's subscribers, lets the writers run, then asks for the counts once every subscriber has all it should get.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openCounter, type FrameCounter } from './frame-counter.js';

const now = () => performance.timeOrigin + performance.now();

/** Milliseconds since the epoch of an RFC 3339 UTC timestamp with up to nine fraction digits. */
function epochMs(ts: string): number {
  const dot = ts.indexOf('.', 19);
  const whole = Date.parse(`${ts.slice(0, 19)}Z`);
  return dot < 0 ? whole : whole + Number(`0${ts.slice(dot, -1)}`) * 1000;
}

export interface OpenRequest {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  count: number;
}

export interface PhaseCounts {
  /** frames each subscriber received */
  received: number[];
  gaps: number;
  bytes: number;
  errors: string[];
  /** stamp-to-receipt latencies (µs), one per event, each sampled by one subscriber in turn */
  latencyUs: number[];
  /** CPU time of the subscriber process from open to the last frame, as % of one core */
  cpuPercent: number;
}

type Command = { cmd: 'open'; request: OpenRequest } | { cmd: 'finish'; expected: number; timeoutMs: number };

export interface Subscribers {
  open(request: OpenRequest): Promise<void>;
  /** Waits (up to timeoutMs) until each subscriber has `expected` frames, closes them all and returns the counts. */
  finish(expected: number, timeoutMs: number): Promise<PhaseCounts>;
  stop(): Promise<void>;
}

/** Forks the subscriber process. */
export function startSubscribers(): Subscribers {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  function ask<T>(command: Command): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onExit = () => reject(new Error('the subscriber process exited'));
      child.once('exit', onExit);
      child.once('message', (reply: { ok: true; value: T } | { ok: false; error: string }) => {
        child.off('exit', onExit);
        if (reply.ok) resolve(reply.value);
        else reject(new Error(reply.error));
      });
      child.send(command);
    });
  }
  return {
    open: (request) => ask<void>({ cmd: 'open', request }),
    finish: (expected, timeoutMs) => ask<PhaseCounts>({ cmd: 'finish', expected, timeoutMs }),
    async stop() {
      child.disconnect();
      await exited;
    },
  };
}

function childMain(): void {
  let counters: FrameCounter[] = [];
  let latencyUs: number[] = [];
  let cpuAtOpen = process.cpuUsage();
  let openedAt = now();
  const reply = (value: unknown) => process.send?.({ ok: true, value });

  async function handle(command: Command): Promise<unknown> {
    if (command.cmd === 'open') {
      const { request } = command;
      latencyUs = [];
      const sample = (text: string) => {
        const at = text.indexOf('"timestamp":"') + 13;
        latencyUs.push((now() - epochMs(text.slice(at, text.indexOf('"', at)))) * 1000);
      };
      // Subscriber i samples every count-th frame starting at its i-th: each event is sampled once, by one of them.
      counters = await Promise.all(
        Array.from({ length: request.count }, (_, i) => openCounter({ host: request.host, port: request.port, path: request.path, headers: request.headers, sample, every: request.count, phase: i })),
      );
      cpuAtOpen = process.cpuUsage();
      openedAt = now();
      return undefined;
    }
    const until = now() + command.timeoutMs;
    while (counters.some((c) => c.received() < command.expected && c.error() === undefined) && now() < until) await new Promise((r) => setTimeout(r, 10));
    const cpu = process.cpuUsage(cpuAtOpen);
    const elapsedMs = Math.max(1, now() - openedAt);
    const counts: PhaseCounts = {
      received: counters.map((c) => c.received()),
      gaps: counters.reduce((n, c) => n + c.gaps(), 0),
      bytes: counters.reduce((n, c) => n + c.bytes(), 0),
      errors: counters.flatMap((c) => c.error() ?? []),
      latencyUs,
      cpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100),
    };
    await Promise.all(counters.map((c) => c.close()));
    counters = [];
    return counts;
  }

  process.on('message', (command: Command) => {
    handle(command).then(reply, (error: unknown) => process.send?.({ ok: false, error: String(error) }));
  });
}

if (process.argv.includes('--child') && process.send !== undefined) childMain();
