// A purge in this process: the memory tier, the latest answers kept for staleness,
// and, when this process is the one asked to, Redis, which tells every other
// process sharing it. And what another process's purge, heard through Redis,
// does here. Reads in flight when a purge begins store nothing (tiers.ts).
//
// With server.workers > 1 a worker learns of a purge twice, from the primary and
// through Redis: whichever comes second finds it done (by its number among the
// purges of that Redis) and does nothing, so each purge is counted once.
import type { Logger } from 'pino';
import type { CacheGeneration } from '../cache/generation.js';
import { cacheKeyText, latestKeyText, routeNameOfKey } from '../cache/key.js';
import type { PurgeNotice } from '../cache/store.js';
import { NodeError } from '../errors.js';
import type { ReadRequest, StoredAnswer } from '../model/read.js';
import { asError } from '../process/log-error.js';
import type { LatestAnswers } from './latest-answers.js';
import type { NodeReader, SharedPurge, SharedPurged } from './ports.js';
import type { CacheTiers } from './tiers.js';

/** What a purge removes, parsed. Versions are the ones entries are stored at (StoredAnswer.version). */
export type CacheScope =
  | { scope: 'all' }
  | { scope: 'family'; family: string; from: bigint; to: bigint | null }
  | { scope: 'request'; read: ReadRequest };

/** What is dropped from memory: everything, a family's versions, or one key. */
type Drop = 'all' | { family: string; from: bigint; to: bigint | null } | { key: string };

/** What a purge did in this process. */
export interface PurgeDone {
  /** memory-tier entries dropped */
  memoryEntries: number;
  /** 'off': no Redis; 'left': another process purges it; 'purged'; 'failed': Redis did not answer (a retry is safe) */
  redis: 'off' | 'left' | 'purged' | 'failed';
  /** Redis entries deleted (family, request), when this process purged Redis */
  redisEntries?: number;
  /** the cache generation after a purge of everything */
  generation?: number;
  /** its number among the purges of that Redis, when this process purged Redis */
  announced?: number;
  /** a request's purge: the family and version of the entry it named, as this process parsed it (admin/purge.ts) */
  named?: { family: string; version?: string };
}

/** How the process that purges Redis is told to, and how the others are told what it did. */
export interface PurgeOrder {
  /** this process purges Redis (one process per purge does) */
  shared: boolean;
  /** 'all' in a process that leaves Redis to another: the generation that one moved to */
  generation?: number;
  /** in a process that leaves Redis to another: the number that one announced the purge by */
  announced?: number;
}

/** How many purges heard or run are remembered by number, so the second word of one does nothing. */
const REMEMBERED_PURGES = 64;

export interface CachePurgeDeps {
  /** the vendor in every cache key (read at each use: with vendor: auto the nodes name it) */
  vendor: { readonly vendor: string };
  nodes: Pick<NodeReader, 'chainId' | 'notReadyReason'>;
  tiers: CacheTiers;
  generation: CacheGeneration;
  latest?: LatestAnswers;
  shared?: SharedPurge;
  /** every cached route's family, by route name */
  families: ReadonlyMap<string, string>;
  logger: Logger;
}

export class CachePurge {
  /** memory entries dropped, by the number of the purge (purges announced through Redis) */
  private readonly done = new Map<number, number>();

  constructor(private readonly deps: CachePurgeDeps) {
    deps.shared?.onPurge((notice, announced) => this.heard(notice, announced));
  }

  /** Purges `scope` here (and in Redis when ordered). Throws a NodeError (not ready) for a request while the chain is unknown. */
  async run(scope: CacheScope, order: PurgeOrder): Promise<PurgeDone> {
    const { tiers, generation } = this.deps;
    const keys = scope.scope === 'request' ? this.keysOf(scope.read) : undefined;
    tiers.countPurge();
    const shared = this.deps.shared;
    const done: PurgeDone = {
      memoryEntries: 0,
      redis: shared === undefined ? 'off' : order.shared ? 'purged' : 'left',
    };
    // Redis first: a miss here in between would find the entry there again.
    if (shared !== undefined && order.shared) {
      try {
        const purged =
          scope.scope === 'all'
            ? await shared.purgeAll()
            : scope.scope === 'family'
              ? await shared.purgeRange(scope.family, scope.from, scope.to)
              : await this.purgeKeys(shared, keys!);
        if (scope.scope !== 'all') done.redisEntries = purged.deleted;
        done.announced = purged.announced;
        if (purged.widened !== undefined && scope.scope === 'family') {
          const { fromVersion, toVersion } = purged.widened;
          this.deps.logger.warn(
            { family: scope.family, fromVersion, toVersion },
            'cache purge: the family had many range purges on record, now one over these versions: every entry of it in them from before is read afresh',
          );
        }
      } catch (err) {
        done.redis = 'failed';
        this.deps.logger.warn(
          { scope: scope.scope, err: asError(err) },
          'cache purge: redis did not answer; its entries are not purged',
        );
      }
    }
    if (scope.scope === 'all') {
      if (shared === undefined) generation.advance(generation.current + 1);
      else if (order.generation !== undefined) generation.advance(order.generation);
      done.generation = generation.current;
    }
    const announced = done.announced ?? order.announced;
    const heard = announced === undefined ? undefined : this.done.get(announced);
    if (heard !== undefined) {
      // Heard through Redis before the primary's word came: done already.
      done.memoryEntries = heard;
      return done;
    }
    // Another purge may have begun meanwhile: this one's reads in flight are fenced again.
    tiers.countPurge();
    done.memoryEntries =
      scope.scope === 'all'
        ? this.dropHere('all')
        : scope.scope === 'family'
          ? this.dropHere(scope)
          : keys!.reduce((dropped, key) => dropped + this.dropHere({ key }), 0);
    this.remember(announced, done.memoryEntries);
    return done;
  }

  /** Another process's purge (`announced`: its number), or purges missed while Redis was away. */
  private heard(notice: PurgeNotice, announced: number | undefined): void {
    if (announced !== undefined && this.done.has(announced)) return;
    this.deps.tiers.countPurge();
    let dropped: number;
    if (notice.scope === 'family')
      dropped = this.dropHere({
        family: notice.family,
        from: BigInt(notice.fromVersion),
        to: notice.toVersion === null ? null : BigInt(notice.toVersion),
      });
    else if (notice.scope === 'key') dropped = this.dropHere({ key: notice.key });
    else dropped = this.dropHere('all');
    this.remember(announced, dropped);
    if (notice.scope === 'missed')
      this.deps.logger.info(
        { memoryEntries: dropped, generation: this.deps.generation.current },
        'cache purges were missed while redis was away: memory tier cleared',
      );
    else
      this.deps.logger.debug({ scope: notice.scope, memoryEntries: dropped }, 'cache purge heard from another process');
  }

  private remember(announced: number | undefined, dropped: number): void {
    if (announced === undefined) return;
    this.done.set(announced, dropped);
    // A Map keeps insertion order: the first key is the oldest.
    if (this.done.size > REMEMBERED_PURGES) this.done.delete(this.done.keys().next().value!);
  }

  /** Drops what `drop` names from memory, and every latest answer; returns how many memory entries. */
  private dropHere(drop: Drop): number {
    const memory = this.deps.tiers.memory;
    this.deps.latest?.clear();
    if (drop === 'all') return memory.purge();
    if ('key' in drop) {
      const had = memory.get(drop.key) !== undefined;
      memory.delete(drop.key);
      return had ? 1 : 0;
    }
    const { from, to } = drop;
    const names = new Set<string>();
    for (const [name, family] of this.deps.families) if (family === drop.family) names.add(name);
    return memory.purge(
      (text: string, answer: StoredAnswer) =>
        answer.version >= from && (to === null || answer.version <= to) && names.has(routeNameOfKey(text) ?? ''),
    );
  }

  /**
   * Why a request cannot be purged yet: the nodes have not said the chain its
   * key names, nor (vendor: auto) the vendor it is parsed and keyed by; the
   * chain is known only once the vendor is. undefined once they have.
   */
  requestRefusal(): NodeError | undefined {
    if (this.deps.nodes.chainId() !== undefined) return undefined;
    return NodeError.notReady(this.deps.nodes.notReadyReason?.() ?? 'the chain the nodes are on is not known yet');
  }

  /**
   * The key texts a pinned request's purge removes, on the nodes' chain, with the
   * vendor they named, in the current generation: its own, and for a route the
   * change feed answers, the same read's newest answer (latestKeyText), which the
   * feed would otherwise go on serving at every newer version.
   */
  private keysOf(read: ReadRequest): string[] {
    const chain = this.deps.nodes.chainId();
    if (chain === undefined) throw this.requestRefusal()!;
    const { vendor } = this.deps.vendor;
    const generation = this.deps.generation.current;
    const keys = [cacheKeyText(vendor, chain, read, read.version, generation)];
    if (read.route.stateRead !== undefined && read.version !== null)
      keys.push(latestKeyText(vendor, chain, read, generation));
    return keys;
  }

  /** Purges each key in Redis; the announcement of the last, each one remembered as done here. */
  private async purgeKeys(shared: SharedPurge, keys: string[]): Promise<SharedPurged> {
    let deleted = 0;
    let last: SharedPurged | undefined;
    for (const key of keys) {
      if (last?.announced !== undefined) this.remember(last.announced, 0);
      last = await shared.purgeKey(key);
      deleted += last.deleted;
    }
    return { ...last!, deleted };
  }
}
