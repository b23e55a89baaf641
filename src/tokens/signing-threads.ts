// Signing off the main thread: ES256 signing is about half the CPU of a mint, and on the main thread it
// queues every other request behind it. Worker threads sign while the main thread serves HTTP and commits
// the TokenMinted record, so a mint's signature and its durable record are made at the same time.
//
// A job is posted at once to an idle thread; jobs made while every thread is busy wait and leave together
// with the next answer, so a busy pool pays one message per batch rather than per token.
import { Worker } from 'node:worker_threads';
import type { SigningKey } from './keys.js';
import { inlineSigner, SIGN_PARAMS, type Signer } from './sign.js';

// Plain JavaScript, so a thread starts in milliseconds without a TypeScript loader. Messages in: a key
// ({kid, alg, key}) before its first job, then batches [[kid, input], ...]; out: one signature or
// {error} per job, in order.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { sign } = require('node:crypto');
const keys = new Map();
parentPort.on('message', (m) => {
  if (!Array.isArray(m)) return void keys.set(m.kid, { key: m.key, params: workerData[m.alg] });
  const out = new Array(m.length);
  for (let i = 0; i < m.length; i++) {
    const [kid, input] = m[i];
    try {
      const k = keys.get(kid);
      out[i] = sign(k.params.digest, Buffer.from(input, 'latin1'), { key: k.key, dsaEncoding: k.params.dsaEncoding }).toString('base64url');
    } catch (error) {
      out[i] = { error: String(error) };
    }
  }
  parentPort.postMessage(out);
});
`;

interface Job {
  kid: string;
  input: string;
  resolve(signature: string): void;
  reject(error: Error): void;
}

class SigningThread {
  readonly worker: Worker;
  /** batches posted and not yet answered, oldest first */
  private readonly posted: Job[][] = [];
  private waiting: Job[] = [];
  private readonly kids = new Set<string>();
  private failure: Error | undefined;

  constructor() {
    this.worker = new Worker(THREAD, { eval: true, workerData: SIGN_PARAMS });
    // The service's listening socket keeps the process alive; an idle signing thread must not.
    this.worker.unref();
    this.worker.on('message', (out: Array<string | { error: string }>) => this.answered(out));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`signing thread exited with code ${code}`)));
  }

  get load(): number {
    return this.posted.length * 1024 + this.waiting.length;
  }

  submit(key: SigningKey, job: Job): void {
    if (this.failure) return job.reject(this.failure);
    if (!this.kids.has(key.kid)) {
      this.kids.add(key.kid);
      this.worker.postMessage({ kid: key.kid, alg: key.alg, key: key.privateKey });
    }
    this.waiting.push(job);
    if (this.posted.length === 0) this.post();
  }

  private post(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.posted.push(batch);
    this.worker.postMessage(batch.map((j) => [j.kid, j.input]));
  }

  private answered(out: Array<string | { error: string }>): void {
    const batch = this.posted.shift() ?? [];
    if (this.waiting.length > 0) this.post();
    for (let i = 0; i < batch.length; i++) {
      const job = batch[i] as Job;
      const signature = out[i];
      if (typeof signature === 'string') job.resolve(signature);
      else job.reject(new Error(`signing failed: ${signature?.error ?? 'no answer'}`));
    }
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const job of [...this.posted.flat(), ...this.waiting]) job.reject(error);
    this.posted.length = 0;
    this.waiting = [];
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the signing threads are stopped');
    await this.worker.terminate();
  }
}

/** The signer for SERVICE_SIGNING_THREADS: that many signing threads, or the calling thread for 0. */
export function createSigner(threads: number): Signer {
  return threads > 0 ? createSigningThreads(threads) : inlineSigner;
}

/** `threads` worker threads that sign; jobs go to the least loaded one. */
export function createSigningThreads(threads: number): Signer {
  const pool = Array.from({ length: threads }, () => new SigningThread());
  return {
    sign(key, input) {
      let thread = pool[0] as SigningThread;
      for (const t of pool) if (t.load < thread.load) thread = t;
      return new Promise((resolve, reject) => thread.submit(key, { kid: key.kid, input, resolve, reject }));
    },
    async close() {
      await Promise.all(pool.map((t) => t.close()));
    },
  };
}
