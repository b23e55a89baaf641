// Signing off the main thread: ES256 signing is about half the CPU of a mint, and on the main thread it
// queues every other request behind it. Worker threads sign while the main thread serves HTTP and commits
// the TokenMinted record, so a mint's signature and its durable record are made at the same time.
//
// A job is posted at once to an idle thread; jobs made while every thread is busy wait and leave together
// with the next answer, so a busy pool pays one message per batch rather than per token.
//
// A thread that exits or fails takes only its own jobs with it: they are refused, and the next job finds a
// new thread in its place. The replacement is made on demand, so a thread that cannot start costs each job
// one attempt, never a loop of restarts.
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
  /** why the thread is out of service; its jobs were refused with it */
  failure: Error | undefined;

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
    this.fail(STOPPED);
    await this.worker.terminate();
  }
}

const STOPPED = new Error('the signing threads are stopped');

/** The signer for SERVICE_SIGNING_THREADS: that many signing threads, or the calling thread for 0. */
export function createSigner(threads: number, options: SigningThreadsOptions = {}): Signer {
  return threads > 0 ? new SigningThreads(threads, options) : inlineSigner;
}

export interface SigningThreadsOptions {
  /** called when a thread that exited or failed is replaced, with what ended it */
  replaced?(reason: Error): void;
}

/** `threads` worker threads that sign; jobs go to the least loaded one. */
export class SigningThreads implements Signer {
  private readonly pool: SigningThread[];
  private closed = false;

  constructor(threads: number, private readonly options: SigningThreadsOptions = {}) {
    this.pool = Array.from({ length: threads }, () => new SigningThread());
  }

  /** The threads now in service (for tests that end one the way a crash would). */
  get workers(): readonly Worker[] {
    return this.pool.map((t) => t.worker);
  }

  sign(key: SigningKey, input: string): Promise<string> {
    if (this.closed) return Promise.reject(STOPPED);
    let best = 0;
    for (let i = 0; i < this.pool.length; i++) {
      const failure = (this.pool[i] as SigningThread).failure;
      if (failure) {
        this.pool[i] = new SigningThread();
        this.options.replaced?.(failure);
      }
      if ((this.pool[i] as SigningThread).load < (this.pool[best] as SigningThread).load) best = i;
    }
    const thread = this.pool[best] as SigningThread;
    return new Promise((resolve, reject) => thread.submit(key, { kid: key.kid, input, resolve, reject }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pool.map((t) => t.close()));
  }
}
