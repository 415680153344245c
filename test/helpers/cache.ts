// Shared pieces of the cache integration suites: fixed inputs whose answers the
// sim's model functions predict, a bounded poll, and reply checks.
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import {
  encodeBcsValues,
  encodeJsonValues,
  simBalance,
  simTableItem,
  SIM_MODULE_ADDRESS,
  type SimNode,
} from '../../src/sim/index.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { hex } from './bytes.js';
import { call, HANDLE, type Reply } from './proxy.js';

/** Keys of HANDLE: PRESENT ones have an item at every version, ABSENT ones never do. */
const CANDIDATE_KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 0x5a]));
export const PRESENT_KEYS = CANDIDATE_KEYS.filter((k) => simTableItem(HANDLE, k, 0n) !== null);
const ABSENT_KEYS = CANDIDATE_KEYS.filter((k) => simTableItem(HANDLE, k, 0n) === null);
export const PRESENT = PRESENT_KEYS[0];
/** A key with an item at every version in another table. */
export const presentKeyOf = (handle: string): Buffer =>
  CANDIDATE_KEYS.find((k) => simTableItem(handle, k, 0n) !== null)!;
export const ABSENT = ABSENT_KEYS[0];

export const OWNER = '0x' + 'cd'.repeat(32);
export const OWNER2 = '0x' + 'ce'.repeat(32);
export const BALANCE = '0x1::sim::balance';

/** The raw_item body the sim answers for HANDLE/key at version. */
export function itemAt(key: Buffer, version: bigint, handle = HANDLE): Buffer {
  const value = simTableItem(handle, key, version);
  if (value === null) throw new Error(`no item for ${hex(key)} in ${handle}`);
  return value;
}

/** balance(owner) at version as the sim answers it in JSON or BCS. */
export function balanceAt(owner: string, version: bigint, format: 'json' | 'bcs' = 'json'): Buffer {
  const values = [{ type: 'u64' as const, value: simBalance(owner, version) }];
  return format === 'json' ? encodeJsonValues(values) : encodeBcsValues(values);
}

/** POST /v1/view with a BCS request body (the Aptos SDK's way) for a 0x1::sim function. */
export function viewBcsRequest(
  base: string,
  fn: string,
  args: Uint8Array[],
  opts: { version?: bigint | number; accept?: string } = {},
): Promise<Reply> {
  const q = opts.version !== undefined ? `?ledger_version=${opts.version}` : '';
  const body = Buffer.from(
    encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: fn, typeArgs: [], args }),
  );
  return call(base, `/v1/view${q}`, {
    headers: { 'content-type': 'application/x.node.view_function+bcs', accept: opts.accept ?? 'application/json' },
    body,
  });
}

export { hex, u64le } from './bytes.js';
export { errorBodyOf, simHeaders } from './expect.js';

/** Requests that reached the node other than the proxy's health probes. */
export function served(node: SimNode): number {
  return node.counters.total - node.counters.byRoute.ledger_info;
}

/** Probes often, so the watermark follows the sim within a few tens of ms. */
export const FAST_PROBES = { routing: { probeIntervalMs: 50 } };

/** A reply's X-Cache and X-Cache-Tier, e.g. "HIT memory", "MISS". */
export function cacheOf(reply: Reply): string {
  const tier = reply.headers['x-cache-tier'];
  return tier === undefined ? (reply.headers['x-cache'] ?? '(none)') : `${reply.headers['x-cache']} ${tier}`;
}

export function expectHitMemory(reply: Reply, label: string): void {
  expect(cacheOf(reply), label).toBe('HIT memory');
}

/** How many replies said each X-Cache value (with tier). */
export function tally(replies: Reply[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of replies) out[cacheOf(r)] = (out[cacheOf(r)] ?? 0) + 1;
  return out;
}

export function expectStatus(reply: Reply, status: number, label = ''): void {
  expect(
    reply.status,
    `${label} status (X-Cache ${cacheOf(reply)}, body ${reply.body.toString('utf8').slice(0, 300)})`,
  ).toBe(status);
}

/** Runs op and measures it in ms. */
export async function timed<T>(op: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await op();
  return { value, ms: performance.now() - start };
}

/**
 * Opens `n` keep-alive connections to the proxy (n concurrent pinned reads of an
 * unrelated key), so that a following burst of n requests does not wait for
 * connection setup and really overlaps. Counts at the sim: n raw_item calls.
 */
export async function warmConnections(base: string, n: number): Promise<void> {
  const key = hex(Buffer.from([0xee, 0xee, 0xee]));
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      call(base, `/v1/tables/${HANDLE}/raw_item?ledger_version=${100 + i}`, {
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({ key }),
      }),
    ),
  );
  for (const r of replies)
    if (r.status !== 200 && r.status !== 404) throw new Error(`warm-up read answered ${r.status}`);
}

/** The answer entries (not fill locks, fill outcomes, nor the purge state and index) under a key prefix in Redis, sorted. */
export async function redisEntryKeys(client: Redis, prefix: string): Promise<string[]> {
  const keys = await client.keys(`${prefix}*`);
  return keys
    .filter(
      (k) => !k.startsWith(`${prefix}lock:`) && !k.startsWith(`${prefix}fill:`) && !k.startsWith(`${prefix}purge`),
    )
    .sort();
}
