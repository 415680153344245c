// What the primary of server.workers > 1 asks its workers over their IPC channel
// (readiness, metrics, a cache purge), and how a worker answers. Every question is bounded: a
// worker that is booting, busy or dead costs the asker at most the wait, never
// an error. A worker is asked only once it has said it answers, so a booting
// worker is left out instead of waited for.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, type Registry } from 'prom-client';
import type { NodeError } from '../errors.js';
import type { Readiness } from '../admin/server.js';
import type { PurgeScope } from '../admin/purge-body.js';
import type { PurgeDone, PurgeOrder } from '../serve/purge.js';

type Question = 'readiness' | 'metrics' | 'purge';
const ASK = 'ledger-proxy:ask';
const ANSWER = 'ledger-proxy:answer';
/** A worker sends this once it can answer questions. */
const ANSWERING = 'ledger-proxy:answering';

interface AskMessage {
  type: typeof ASK;
  id: number;
  question: Question;
  /** what a purge purges */
  purge?: WorkerPurge;
}
interface AnswerMessage {
  type: typeof ANSWER;
  id: number;
  answer: unknown;
}

type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** A purge as the primary orders it of one worker. */
export interface WorkerPurge {
  scope: PurgeScope;
  order: PurgeOrder;
}

/** A worker's answer to a purge: what it did, or the error it refused it with (not ready). */
export type WorkerPurgeAnswer = PurgeDone | { error: { status: number; code: string; message: string } };

export interface WorkerAnswers {
  readiness(): Readiness;
  metrics(): Promise<WorkerMetrics>;
  purge(purge: WorkerPurge): Promise<PurgeDone | NodeError>;
}

/** In a worker: answers the primary's questions from now on, and tells it so. */
export function serveAsWorker(answers: WorkerAnswers): void {
  process.on('message', (message: AskMessage) => {
    if (message?.type !== ASK) return;
    const reply = (answer: unknown): void => {
      const out: AnswerMessage = { type: ANSWER, id: message.id, answer };
      // The primary may be gone (shutting down): nothing to tell it then.
      if (process.connected) process.send?.(out, undefined, {}, () => undefined);
    };
    const failed = (): void => reply(undefined);
    if (message.question === 'readiness') reply(answers.readiness());
    else if (message.question === 'metrics') answers.metrics().then(reply, failed);
    else if (message.purge !== undefined) answers.purge(message.purge).then((done) => reply(purgeAnswer(done)), failed);
  });
  process.send?.({ type: ANSWERING }, undefined, {}, () => undefined);
}

/** In the primary: the workers that answer, and a bounded way to ask them. */
export class WorkerChannel {
  private readonly answering = new Set<Worker>();
  private readonly pending = new Map<number, (answer: unknown) => void>();
  private nextId = 0;

  constructor() {
    cluster.on('message', (worker, message: { type?: string; id?: number; answer?: unknown }) => {
      if (message?.type === ANSWERING) this.answering.add(worker);
      else if (message?.type === ANSWER) this.pending.get(message.id!)?.(message.answer);
    });
    cluster.on('exit', (worker) => this.answering.delete(worker));
  }

  /** Workers that said they answer and whose channel is still open. */
  workers(): Worker[] {
    return [...this.answering].filter((w) => w.isConnected());
  }

  /** `worker`'s answer, or undefined when it does not come within `waitMs` or cannot be asked. `purge`: what a purge purges. */
  ask<T>(worker: Worker, question: Question, waitMs: number, purge?: WorkerPurge): Promise<T | undefined> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      const done = (answer: unknown): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(answer as T | undefined);
      };
      const timer = setTimeout(() => done(undefined), waitMs);
      this.pending.set(id, done);
      const message: AskMessage = { type: ASK, id, question, purge };
      // With a callback, a write to a worker that died a moment ago is an answer
      // of undefined; without one it is an 'error' event that ends the primary.
      worker.send(message, undefined, {}, (err) => {
        if (err) done(undefined);
      });
    });
  }
}

/** A purge's outcome as JSON can carry it over the channel. */
function purgeAnswer(done: PurgeDone | NodeError): WorkerPurgeAnswer {
  return 'memoryEntries' in done ? done : { error: { status: done.status, code: done.code, message: done.message } };
}

/**
 * Every answering worker's metrics added up (prom-client's aggregation), with
 * the primary's own (`own`: its purges), and two gauges that say whether the
 * scrape is whole: a worker that does not answer within `waitMs` is left out of
 * this scrape rather than failing it.
 */
export async function clusterMetrics(
  channel: WorkerChannel,
  expected: number,
  waitMs: number,
  own: Registry,
): Promise<{ contentType: string; body: string }> {
  const answers = await Promise.all(channel.workers().map((w) => channel.ask<WorkerMetrics>(w, 'metrics', waitMs)));
  const scraped = answers.filter((a): a is WorkerMetrics => Array.isArray(a));
  const registry = AggregatorRegistry.aggregate([...scraped, await own.getMetricsAsJSON()]);
  const registers = [registry];
  new Gauge({
    name: 'ledger_proxy_workers',
    help: 'Workers the primary keeps running (server.workers)',
    registers,
  }).set(expected);
  new Gauge({
    name: 'ledger_proxy_workers_scraped',
    help: 'Workers whose metrics this scrape adds up; fewer than ledger_proxy_workers while one boots, after one died, or when one did not answer in time',
    registers,
  }).set(scraped.length);
  return { contentType: registry.contentType, body: await registry.metrics() };
}
