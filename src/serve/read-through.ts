// The read path of every cached route (DESIGN "Data flow"):
//   pinned N: pruned? → 410; memory → redis → one node call per key (single-flight,
//             and a short Redis lock across instances) → store if immutable.
//   latest:   one node call per canonical request in flight → store the answer as
//             the pinned answer at the version in its ledger header.
//   by path:  a transaction or block: as pinned, keyed without N; its pruning is
//             the path's version or height, or (by hash) the version in the entry.
import type { Logger } from 'pino';
import { ERROR_CONTENT_TYPE, errorBody, NodeError } from '../errors.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { Watermark } from '../ledger/watermark.js';
import type { NodeAnswer } from '../upstream/answer.js';
import type { ReadRequest, StoredAnswer } from '../wire/read-request.js';
import { cacheKeyText, sharedKey } from '../cache/key.js';
import type { MemoryStore } from '../cache/memory.js';
import type { AnswerStore, FillLock, FillOutcome } from '../cache/store.js';
import type { LatestAnswer, LatestAnswers } from './latest-answers.js';
import { withGzip } from './compress.js';
import { cacheability, itemVersion } from './policy.js';
import { SingleFlight } from './single-flight.js';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED' | 'BYPASS' | 'STALE';
export type CacheTier = 'memory' | 'redis';

/** How a reply was served, and what to send. */
export interface ReadResult {
  status: number;
  contentType: string;
  body: Buffer;
  gasUsed?: string;
  /** the next page's cursor, replayed with the entry it came with */
  cursor?: string;
  /** the ledger snapshot for the reply's headers, when one is known */
  ledger: LedgerInfo | null;
  cache: CacheStatus;
  tier?: CacheTier;
  /** the node that answered, for a node call */
  upstream?: string;
  /** the body gzipped, for a client that accepts it (memory-tier entries of 1 KiB and more) */
  gzip?: Buffer;
}

/** The upstream side the read path needs (UpstreamPool implements it). */
export interface NodeReader {
  /** `deadlineAt` (epoch ms) bounds the whole read, retries included */
  read(req: ReadRequest, deadlineAt?: number): Promise<NodeAnswer>;
  isPruned(version: bigint): boolean;
  /** a block height below the oldest block of every node that could serve it */
  isBlockPruned(height: bigint): boolean;
  /** The chain the nodes are on; undefined while not known (then nothing is served or cached). */
  chainId(): number | undefined;
  /** why chainId() is undefined, for the not-ready reply (no URLs, no keys) */
  notReadyReason?(): string;
}

/**
 * Redis, as the read path uses it: a store plus a short lock for cross-instance
 * fills, and the filler's word to those waiting for it.
 */
export interface SharedStore extends AnswerStore {
  /** false while disconnected or just after a failed command: then it is skipped */
  isHealthy(): boolean;
  tryLock(key: string, ttlMs: number): Promise<FillLock | 'held' | 'failed'>;
  /** tells the waiters of key the fill's outcome */
  publishFill(key: string, outcome: FillOutcome): Promise<void>;
  /** the outcome of another holder's fill of key; undefined when none came in time */
  awaitFill(key: string, timeoutMs: number): Promise<FillOutcome | undefined>;
}

export interface ReadThroughOptions {
  vendor: string;
  nodes: NodeReader;
  /** synchronous, so a memory hit takes no async hop */
  memory: MemoryStore;
  redis?: SharedStore;
  redisSettings?: { maxTtlSeconds: number; fillLock: boolean; fillLockMs: number };
  /** routing.deadlineMs: a pinned miss, waiting for another instance's fill included, ends within it */
  deadlineMs: number;
  watermark: Watermark;
  pruneClock: PruneClock;
  logger: Logger;
  /** newest latest answers, for bounded staleness and stale-if-error */
  latest?: LatestAnswers;
  /** told of every stale reply, by reason, for metrics */
  onStale?: (reason: 'bound' | 'error') => void;
}

interface Filled {
  answer: StoredAnswer;
  tier?: CacheTier;
  upstream?: string;
  /** another instance's one-off answer, relayed */
  relayed?: true;
}

export class ReadThrough {
  private readonly pinnedFlights = new SingleFlight<Filled>();
  private readonly latestFlights = new SingleFlight<NodeAnswer>();
  /**
   * The key text of a request at its own version, kept with the request object:
   * the public entry reuses one parsed request per spelling, so a repeated hit builds
   * no key and the memory tier hashes a string whose hash V8 already holds.
   */
  private readonly keyTexts = new WeakMap<ReadRequest, { chain: number; text: string; shared: string | undefined }>();

  constructor(private readonly o: ReadThroughOptions) {}

  read(req: ReadRequest): Promise<ReadResult> | ReadResult {
    if (req.route.pin === 'path') return this.readPinned(req, null);
    return req.version === null ? this.readLatest(req) : this.readPinned(req, req.version);
  }

  /**
   * The 410 a node would answer before any lookup: a pinned N, or the version
   * or block height a path names, below every node's history.
   */
  private prunedError(req: ReadRequest, version: bigint | null): NodeError | undefined {
    if (version !== null) return this.o.nodes.isPruned(version) ? NodeError.pruned(version) : undefined;
    const item = req.item;
    if (item === undefined) return undefined;
    if ('version' in item) return this.o.nodes.isPruned(item.version) ? NodeError.pruned(item.version) : undefined;
    if ('height' in item && this.o.nodes.isBlockPruned(item.height)) return NodeError.blockPruned(item.height);
    return undefined;
  }

  /**
   * A stored transaction found by hash whose version is pruned: a node has no
   * 410 for a hash (it answers 404), so the entry is no longer an answer.
   */
  private outlived(req: ReadRequest, answer: StoredAnswer): boolean {
    return req.item !== undefined && 'hash' in req.item && this.o.nodes.isPruned(answer.version);
  }

  private keyOf(req: ReadRequest, chain: number, version: bigint | null): string {
    const known = this.keyTexts.get(req);
    if (known !== undefined && known.chain === chain) return known.text;
    const text = cacheKeyText(this.o.vendor, chain, req, version);
    // Only the request's own version is kept (a latest read is stored under another).
    if (version === req.version) this.keyTexts.set(req, { chain, text, shared: undefined });
    return text;
  }

  /** The shared-store key of `key`, kept with the key text: a sha256 per Redis hit was 3% of it. */
  private sharedKeyOf(req: ReadRequest, key: string): string {
    const known = this.keyTexts.get(req);
    if (known === undefined || known.text !== key) return sharedKey(key);
    return (known.shared ??= sharedKey(key));
  }

  /** The chain to key entries under; a read while it is not known is refused. */
  private chain(): number {
    const chain = this.o.nodes.chainId();
    if (chain === undefined) {
      throw NodeError.notReady(this.o.nodes.notReadyReason?.() ?? 'the chain the nodes are on is not known yet');
    }
    return chain;
  }

  private fromMemory(key: string, req: ReadRequest): ReadResult | undefined {
    const hit = this.o.memory.get(key);
    if (hit === undefined) return undefined;
    if (this.outlived(req, hit)) {
      this.o.memory.delete(key);
      return undefined;
    }
    return this.fromStore(hit, 'HIT', 'memory');
  }

  /**
   * A pinned read at N, or (version null) a path route's read. Synchronous on a
   * memory hit: the hot path takes no async hop.
   */
  private readPinned(req: ReadRequest, version: bigint | null): Promise<ReadResult> | ReadResult {
    const chain = this.chain();
    const pruned = this.prunedError(req, version);
    if (pruned !== undefined) throw pruned;
    const key = this.keyOf(req, chain, version);
    const hit = this.fromMemory(key, req);
    if (hit !== undefined) return hit;
    const { promise, shared } = this.pinnedFlights.do(key, () => this.fillPinned(key, chain, req, version));
    return promise.then((filled) => {
      // The prune line may have moved while Redis or a node answered: a node
      // asked now would say 410, so the proxy does too.
      const prunedNow = this.prunedError(req, version);
      if (prunedNow !== undefined) throw prunedNow;
      if (filled.relayed) return this.fromStore(filled.answer, 'COALESCED');
      return filled.tier !== undefined
        ? this.fromStore(filled.answer, shared ? 'COALESCED' : 'HIT', filled.tier)
        : { ...this.fromStore(filled.answer, shared ? 'COALESCED' : 'MISS'), upstream: filled.upstream };
    });
  }

  private fromStore(answer: StoredAnswer, cache: CacheStatus, tier?: CacheTier): ReadResult {
    return {
      status: answer.status,
      contentType: answer.contentType,
      body: answer.body,
      gasUsed: answer.gasUsed,
      cursor: answer.cursor,
      ledger: this.o.watermark.current(),
      cache,
      tier,
      gzip: answer.gzip,
    };
  }

  /**
   * Puts an answer in the memory tier, then (off the event loop) a gzip copy of
   * its body beside it, for clients that accept it: compressed once, never on a hit.
   */
  private remember(key: string, answer: StoredAnswer): void {
    this.o.memory.set(key, answer);
    void withGzip(answer).then(
      (compressed) => {
        // Only if the entry is still the one compressed (not evicted or replaced).
        if (compressed !== undefined && this.o.memory.get(key) === answer) this.o.memory.set(key, compressed);
      },
      () => undefined,
    );
  }

  private async fillPinned(key: string, chain: number, req: ReadRequest, version: bigint | null): Promise<Filled> {
    const { redis, redisSettings } = this.o;
    const deadlineAt = Date.now() + this.o.deadlineMs;
    const shared = this.sharedKeyOf(req, key);
    let lock: FillLock | undefined;
    // A Redis that is down or stalled costs at most one command timeout: no
    // further lookups, and no wait for a lock.
    if (redis !== undefined && redisSettings !== undefined && redis.isHealthy()) {
      const found = (await redis.get(shared)) as StoredAnswer | undefined;
      if (found !== undefined && !this.outlived(req, found)) {
        this.remember(key, found);
        return { answer: found, tier: 'redis' };
      }
      if (redisSettings.fillLock && redis.isHealthy()) {
        const taken = await redis.tryLock(shared, redisSettings.fillLockMs);
        if (typeof taken === 'object') lock = taken;
        if (taken === 'held') {
          // At most half of what is left, so the node still has time if the fill never comes.
          const waitMs = Math.min(redisSettings.fillLockMs, (deadlineAt - Date.now()) / 2);
          const outcome = await redis.awaitFill(shared, waitMs);
          if (outcome !== undefined && outcome !== 'gave-up') {
            if (!outcome.stored) return { answer: outcome.answer, relayed: true };
            this.remember(key, outcome.answer);
            return { answer: outcome.answer, tier: 'redis' };
          }
        }
      }
    }
    let answer: NodeAnswer;
    try {
      answer = await this.o.nodes.read(req, deadlineAt);
    } catch (err) {
      // Waiters get the proxy's own error as a one-off: they learn now, not at lock expiry.
      if (lock !== undefined) this.tellWaiters(redis!, shared, lock, err instanceof NodeError ? { answer: errorAnswer(err, version ?? 0n), stored: false } : 'gave-up', Promise.resolve());
      throw err;
    }
    let verdict = cacheability(req, answer);
    // A path route's entry belongs to its item's version (TTL, pruning by hash).
    const at = version ?? (verdict.cacheable ? itemVersion(req, answer) : null);
    if (verdict.cacheable && at === null) verdict = { cacheable: false, reason: 'the version of the item is not known' };
    const stored = toStored(answer, at ?? 0n);
    // An answer from after a chain change is not stored under the old chain's key.
    const storable = verdict.cacheable && this.o.nodes.chainId() === chain;
    const written = storable ? this.store(key, stored, shared) : Promise.resolve();
    if (lock !== undefined) this.tellWaiters(redis!, shared, lock, { answer: stored, stored: storable }, written);
    if (!verdict.cacheable) this.o.logger.debug({ route: req.route.name, version: version === null ? undefined : String(version), reason: verdict.reason }, 'answer not cached');
    return { answer: stored, upstream: answer.upstream };
  }

  /**
   * Publishes the fill's outcome at once (waiters need not read the entry), and
   * releases the lock once both the outcome and the shared write have landed, so
   * an instance that takes the lock next finds the entry.
   */
  private tellWaiters(redis: SharedStore, shared: string, lock: FillLock, outcome: FillOutcome, written: Promise<void>): void {
    void Promise.all([redis.publishFill(shared, outcome), written]).finally(() => lock.release());
  }

  /**
   * Stores in memory at once and in Redis in the background: a reply never waits
   * for the shared write. The returned promise settles when Redis has it (or failed).
   * `shared`: key's shared-store key, when the caller has it already.
   */
  private store(key: string, answer: StoredAnswer, shared?: string): Promise<void> {
    this.remember(key, answer);
    const { redis, redisSettings } = this.o;
    if (redis === undefined || redisSettings === undefined || !redis.isHealthy()) return Promise.resolve();
    return Promise.resolve(redis.set(shared ?? sharedKey(key), answer, this.o.pruneClock.secondsUntilPruned(answer.version, redisSettings.maxTtlSeconds)));
  }

  private async readLatest(req: ReadRequest): Promise<ReadResult> {
    // The chain is in the key: a remembered latest answer of another chain is never served.
    const flightKey = `${this.chain()}\n${req.route.name}\n${req.format}\n${req.identity}`;
    const latest = this.o.latest;
    const stale = latest?.withinBound(flightKey, this.o.watermark.current()?.ledgerVersion ?? null);
    if (stale !== undefined) {
      // Stale-while-revalidate: one background refresh per key at a time.
      if (stale.refresh) {
        const { promise } = this.latestFlights.do(flightKey, () => this.fetchLatest(req, flightKey));
        promise.catch((err) => this.o.logger.debug({ err: (err as Error).message }, 'background refresh failed'));
      }
      this.o.onStale?.('bound');
      return staleResult(stale.entry);
    }
    const { promise, shared } = this.latestFlights.do(flightKey, () => this.fetchLatest(req, flightKey));
    let answer: NodeAnswer;
    try {
      answer = await promise;
    } catch (err) {
      const fallback = latest?.forError(flightKey);
      if (fallback === undefined) throw err;
      this.o.onStale?.('error');
      return staleResult(fallback);
    }
    if (answer.status >= 500) {
      const fallback = latest?.forError(flightKey);
      if (fallback !== undefined) {
        this.o.onStale?.('error');
        return staleResult(fallback);
      }
    }
    // A forwarded latest read keeps the answering node's snapshot: it says at
    // which version the data was read.
    return {
      status: answer.status,
      contentType: answer.contentType,
      body: answer.body,
      gasUsed: answer.gasUsed,
      cursor: answer.cursor,
      ledger: answer.ledger,
      cache: shared ? 'COALESCED' : 'MISS',
      upstream: answer.upstream,
    };
  }

  private async fetchLatest(req: ReadRequest, flightKey: string): Promise<NodeAnswer> {
    const answer = await this.o.nodes.read(req);
    const verdict = cacheability(req, answer);
    // Stored under the chain the answer itself reports, and only while that is the nodes' chain.
    if (verdict.cacheable && answer.ledger !== null && answer.ledger.chainId === this.o.nodes.chainId()) {
      const version = answer.ledger.ledgerVersion;
      const stored = toStored(answer, version);
      void this.store(cacheKeyText(this.o.vendor, answer.ledger.chainId, req, version), stored);
      this.o.latest?.remember(flightKey, stored, answer.ledger);
    } else if (!verdict.cacheable) {
      this.o.logger.debug({ route: req.route.name, reason: verdict.reason }, 'latest answer not stored');
    }
    return answer;
  }
}

/** A stale reply carries its own snapshot, never the watermark, so its age is visible. */
function staleResult(entry: LatestAnswer): ReadResult {
  const { answer, ledger } = entry;
  return { status: answer.status, contentType: answer.contentType, body: answer.body, gasUsed: answer.gasUsed, cursor: answer.cursor, ledger, cache: 'STALE' };
}

/** The proxy's error reply, as a one-off answer for another instance's waiters. */
function errorAnswer(err: NodeError, version: bigint): StoredAnswer {
  return { status: err.status, contentType: ERROR_CONTENT_TYPE, body: errorBody(err), version };
}

function toStored(answer: NodeAnswer, version: bigint): StoredAnswer {
  const stored: StoredAnswer = { status: answer.status, contentType: answer.contentType, body: answer.body, gasUsed: answer.gasUsed, version };
  if (answer.cursor !== undefined) stored.cursor = answer.cursor;
  return stored;
}
