// A cache purge with server.workers > 1: the primary serves the admin listener, so
// it orders the purge of every worker's memory tier, and of Redis once. The first
// answering worker purges Redis (which tells other instances) and its own memory;
// then the others purge their memory, taking the generation the first moved to,
// so no worker reads the old one after the answer. Each worker is waited for
// within a bound: one that is silent is named in the answer, never waited on
// for ever. A request is parsed by the workers, with the vendor their nodes
// named: the primary asks no node.
import type { Worker } from 'node:cluster';
import { type ErrorCode, type ErrorStatus, NodeError } from '../errors.js';
import type { PurgeReport } from '../admin/purge.js';
import type { PurgeScope } from '../admin/purge-body.js';
import type { PurgeDone, PurgeOrder } from '../serve/purge.js';
import type { WorkerChannel, WorkerPurgeAnswer } from './worker-channel.js';

/** The longest wait for the worker that purges Redis: a range purge deletes in batches. */
const REDIS_PURGE_WAIT_MS = 30_000;
/** The longest wait for a worker that purges its memory tier only (or any, without Redis). */
const MEMORY_PURGE_WAIT_MS = 5000;

/** Purges `scope` in every answering worker and in Redis (`redis`: one is configured). */
export async function purgeWorkers(
  channel: WorkerChannel,
  scope: PurgeScope,
  redis: boolean,
): Promise<PurgeReport | NodeError> {
  const [first, ...rest] = channel.workers();
  if (first === undefined) return NodeError.notReady('no worker answers yet');
  const lead = await ask(channel, first, scope, { shared: true }, redis);
  if (lead instanceof NodeError) return lead;
  const order: PurgeOrder = { shared: false };
  if (lead?.redis === 'purged') {
    order.announced = lead.announced;
    if (scope.scope === 'all') order.generation = lead.generation;
  }
  const others = await Promise.all(rest.map((worker) => ask(channel, worker, scope, order, redis)));
  const done: PurgeDone[] = [];
  const unanswered: number[] = [];
  for (const [i, answer] of [lead, ...others].entries()) {
    if (answer === undefined || answer instanceof NodeError) unanswered.push(i === 0 ? first.id : rest[i - 1].id);
    else done.push(answer);
  }
  const report: PurgeReport = {
    memoryEntries: done.reduce((sum, d) => sum + d.memoryEntries, 0),
    redis: lead?.redis ?? (redis ? 'unknown' : 'off'),
    workers: { answered: done.length, unanswered },
  };
  if (lead?.redisEntries !== undefined) report.redisEntries = lead.redisEntries;
  // What a request named, as a worker parsed it with the vendor the nodes named.
  const named = done.find((d) => d.named !== undefined)?.named;
  if (named !== undefined) report.named = named;
  if (scope.scope === 'all' && lead?.generation !== undefined) report.generation = lead.generation;
  return report;
}

/** One worker's purge: what it did, undefined when it did not answer in time, or the error it refused it with. */
async function ask(
  channel: WorkerChannel,
  worker: Worker,
  scope: PurgeScope,
  order: PurgeOrder,
  redis: boolean,
): Promise<PurgeDone | NodeError | undefined> {
  const waitMs = order.shared && redis ? REDIS_PURGE_WAIT_MS : MEMORY_PURGE_WAIT_MS;
  const answer = await channel.ask<WorkerPurgeAnswer>(worker, 'purge', waitMs, { scope, order });
  if (answer === undefined || !('error' in answer)) return answer;
  const { status, code, message } = answer.error;
  return new NodeError(status as ErrorStatus, code as ErrorCode, message);
}
