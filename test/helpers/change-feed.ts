// What the change-feed suites share: the latest reads of every covered route for
// a sparse sim's universe, and the oracle every reply is held to: the sim's own
// answer to the same request pinned at the version in the reply's headers
// (SPEC-feed rule 2).
import { simKeyRequests, type SimNode } from '../../src/sim/index.js';
import { call, type Reply } from './proxy.js';

export interface LatestRead {
  /** route family, for the per-route tallies */
  label: string;
  method: 'GET' | 'POST';
  /** the latest read's path; its query (if any) does not hold ledger_version */
  path: string;
  body?: string;
  accept: 'application/json' | 'application/x-bcs';
}

/** Every latest read of the universe's keys, in both formats where a node has both, and each account's lists. */
export function latestReads(node: SimNode): LatestRead[] {
  const universe = node.writes!.universe;
  const reads: LatestRead[] = [];
  const seen = new Set<string>();
  const add = (read: LatestRead): void => {
    const id = `${read.method} ${read.path} ${read.body ?? ''} ${read.accept}`;
    if (seen.has(id)) return;
    seen.add(id);
    reads.push(read);
  };
  for (const key of universe.keys) {
    for (const request of simKeyRequests(key)) {
      for (const format of request.formats) {
        add({
          label: labelOf(request.path),
          method: request.method,
          path: request.path,
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
          accept: format === 'bcs' ? 'application/x-bcs' : 'application/json',
        });
      }
    }
  }
  for (const address of [...universe.accounts, ...universe.objects]) {
    for (const list of ['resources', 'modules', 'resources?limit=2']) {
      for (const accept of ['application/json', 'application/x-bcs'] as const)
        add({ label: list.split('?')[0]!, method: 'GET', path: `/v1/accounts/${address}/${list}`, accept });
    }
  }
  return reads;
}

function labelOf(path: string): string {
  if (path.includes('/raw_item')) return 'raw_item';
  if (path.includes('/state_values/raw')) return 'state_value';
  if (path.includes('/tables/')) return 'table_item';
  if (path.includes('/resource/')) return 'resource';
  if (path.includes('/module/')) return 'module';
  if (path.includes('/balance/')) return 'balance';
  if (path.includes('/view')) return 'view';
  return 'account';
}

export function readLatest(base: string, read: LatestRead): Promise<Reply> {
  const headers: Record<string, string> = { accept: read.accept };
  if (read.body !== undefined) headers['content-type'] = 'application/json';
  return call(base, read.path, { method: read.method, headers, body: read.body });
}

/** The same read pinned at `version`. */
function pinnedPath(path: string, version: bigint): string {
  return `${path}${path.includes('?') ? '&' : '?'}ledger_version=${version}`;
}

/** Why `reply` is not what the node answers pinned at its header version; undefined when it is. */
async function differenceFromNode(node: SimNode, read: LatestRead, reply: Reply): Promise<string | undefined> {
  const at = reply.headers['x-node-ledger-version'];
  if (at === undefined) return `${reply.status} without ledger headers`;
  const headers: Record<string, string> = { accept: read.accept };
  if (read.body !== undefined) headers['content-type'] = 'application/json';
  const pinned = await call(node.url, pinnedPath(read.path, BigInt(at)), {
    method: read.method,
    headers,
    body: read.body,
  });
  const what = (r: Reply): string =>
    `${r.status} ${r.headers['content-type']} cursor=${r.headers['x-node-cursor'] ?? '-'} ${r.body.toString('hex')}`;
  return what(reply) === what(pinned)
    ? undefined
    : `${read.method} ${read.path} (${read.accept}) at ${at}, ${reply.headers['x-cache']}: proxy ${what(reply)}, node ${what(pinned)}`;
}

/** What a round of reads found: differences from the node, and replies by X-Cache per route. */
export interface Tally {
  differences: string[];
  byRoute: Map<string, { hit: number; other: number }>;
  /** hits by X-Cache-Tier */
  byTier: Map<string, number>;
  /** hits that were a 404: absent state, its message restated at the reply's version */
  notFoundHits: number;
}

export function newTally(): Tally {
  return { differences: [], byRoute: new Map(), byTier: new Map(), notFoundHits: 0 };
}

/** Reads `reads` through the proxies at `bases`, `clients` at a time, each reply held to the node. */
export async function readAndCompare(
  node: SimNode,
  bases: string[],
  reads: LatestRead[],
  tally: Tally,
  clients = 4,
): Promise<void> {
  let next = 0;
  const client = async (c: number): Promise<void> => {
    for (let i = next++; i < reads.length; i = next++) {
      const read = reads[i]!;
      const reply = await readLatest(bases[(i + c) % bases.length]!, read);
      const difference = await differenceFromNode(node, read, reply);
      if (difference !== undefined) tally.differences.push(difference);
      const counts = tally.byRoute.get(read.label) ?? { hit: 0, other: 0 };
      if (reply.headers['x-cache'] === 'HIT') {
        counts.hit++;
        const tier = reply.headers['x-cache-tier'] ?? '-';
        tally.byTier.set(tier, (tally.byTier.get(tier) ?? 0) + 1);
        if (reply.status === 404) tally.notFoundHits++;
      } else counts.other++;
      tally.byRoute.set(read.label, counts);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
}

/** The share of `labels`' replies that were hits. */
export function hitShare(tally: Tally, labels: readonly string[]): number {
  let hit = 0;
  let all = 0;
  for (const label of labels) {
    const counts = tally.byRoute.get(label);
    if (counts === undefined) continue;
    hit += counts.hit;
    all += counts.hit + counts.other;
  }
  return all === 0 ? 0 : hit / all;
}

/** The routes the feed answers. */
export const COVERED = ['raw_item', 'state_value', 'account', 'resource', 'resources', 'module', 'modules'] as const;
