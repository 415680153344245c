// The read path of every cached route (DESIGN "Data flow"): a pinned read
// (pinned.ts: at N, or a transaction or block by its path) or a latest read
// (latest.ts), both on the chain the nodes are on. The tiers they share are in
// tiers.ts; the cross-instance fill of a pinned miss in fill.ts; the second
// node's word before an answer is stored (cache.verify) in verify.ts.
import type { Logger } from 'pino';
import { CacheGeneration } from '../cache/generation.js';
import type { MemoryStore } from '../cache/memory.js';
import { NodeError } from '../errors.js';
import type { PruneClock } from '../ledger/prune-clock.js';
import type { Watermark } from '../ledger/watermark.js';
import type { ReadRequest } from '../model/read.js';
import { FillCoordinator, type FillSettings } from './fill.js';
import { LatestReads } from './latest.js';
import type { LatestAnswers } from './latest-answers.js';
import { PinnedReads } from './pinned.js';
import type { ReadContext } from '../model/read-context.js';
import type { LatestFeed, NodeReader, SharedPurge, SharedStore } from './ports.js';
import { CachePurge } from './purge.js';
import type { ReadResult } from '../model/read-result.js';
import { CacheTiers } from './tiers.js';
import { AnswerVerifier, type VerifyOutcome, type VerifySettings } from './verify.js';

export interface ReadThroughDeps {
  /** the vendor in every cache key (its name is read at each use: with vendor: auto the nodes name it) */
  vendor: { readonly vendor: string };
  nodes: NodeReader;
  /** synchronous, so a memory hit takes no async hop */
  memory: MemoryStore;
  redis?: SharedStore & SharedPurge;
  /** part of every key; the Redis store's when there is one (default: a new one) */
  generation?: CacheGeneration;
  /** every cached route's family, by route name, for purges by family (default: none) */
  families?: ReadonlyMap<string, string>;
  redisSettings?: FillSettings & { maxTtlSeconds: number };
  /** routing.deadlineMs: a pinned miss, waiting for another instance's fill included, ends within it */
  deadlineMs: number;
  watermark: Watermark;
  pruneClock: PruneClock;
  logger: Logger;
  /** newest latest answers, for bounded staleness and stale-if-error */
  latest?: LatestAnswers;
  /** told of every stale reply, by reason, for metrics */
  onStale?: (reason: 'bound' | 'error') => void;
  /** cache.verify (default off): answers stored only once a second node agreed */
  verify?: VerifySettings;
  /** told of every cache.verify check's outcome, for metrics */
  onVerify?: (outcome: VerifyOutcome) => void;
  /** the change feed's judgement of stored latest answers (latest.changeFeed) */
  feed?: LatestFeed;
  /** told of every latest read the feed answered, by route */
  onFeedAnswer?: (route: string) => void;
}

const VERIFY_OFF: VerifySettings = { mode: 'off', sampleRatio: 0 };

export class ReadThrough {
  private readonly nodes: NodeReader;
  private readonly watermark: Watermark;
  private readonly pinned: PinnedReads;
  private readonly latest: LatestReads;
  /** purges of this process's tiers, and of Redis when ordered */
  readonly purge: CachePurge;

  constructor(deps: ReadThroughDeps) {
    this.nodes = deps.nodes;
    this.watermark = deps.watermark;
    const settings = deps.redisSettings;
    const shared = deps.redis !== undefined && settings !== undefined ? { store: deps.redis, settings } : undefined;
    const tiers = new CacheTiers({
      memory: deps.memory,
      shared: shared === undefined ? undefined : { store: shared.store, maxTtlSeconds: shared.settings.maxTtlSeconds },
      pruneClock: deps.pruneClock,
    });
    const { vendor, nodes, deadlineMs, watermark, logger } = deps;
    const verifier = new AnswerVerifier({
      settings: deps.verify ?? VERIFY_OFF,
      nodes,
      deadlineMs,
      logger,
      onVerify: deps.onVerify,
    });
    const generation = deps.generation ?? new CacheGeneration();
    this.pinned = new PinnedReads({
      vendor,
      nodes,
      tiers,
      generation,
      fills: new FillCoordinator(shared),
      deadlineMs,
      watermark,
      logger,
      verifier,
    });
    this.latest = new LatestReads({
      vendor,
      nodes,
      tiers,
      generation,
      watermark,
      logger,
      latest: deps.latest,
      onStale: deps.onStale,
      verifier,
      feed: deps.feed,
      onFeedAnswer: deps.onFeedAnswer,
    });
    this.purge = new CachePurge({
      vendor,
      nodes,
      tiers,
      generation,
      latest: deps.latest,
      shared: deps.redis,
      families: deps.families ?? new Map(),
      logger,
    });
  }

  /**
   * Synchronous on a memory hit. Throws (or rejects with) the NodeError to answer
   * with. `context`: whom the read is for (a node call it makes carries it, and
   * may be refused by it); a hit, or a read that joins another's node call, never is.
   */
  read(req: ReadRequest, context?: ReadContext): Promise<ReadResult> | ReadResult {
    const chain = this.chain();
    if (req.refusedAtLedger !== undefined) throw this.refusedAtLedger(req, req.refusedAtLedger);
    return req.version === null && req.route.pin === 'version'
      ? this.latest.read(req, chain, context)
      : this.pinned.read(req, chain, context);
  }

  /**
   * Input a node refuses once it has read its ledger (a BCS view body that does
   * not decode): what the node answers, without asking one. Its version checks
   * come first: 410 below every node's history, 404 beyond the newest version
   * the proxy knows a node has.
   */
  private refusedAtLedger(req: ReadRequest, message: string): NodeError {
    const at = req.version;
    if (at !== null && this.nodes.isPruned(at)) return NodeError.pruned(at);
    const latest = this.watermark.current();
    if (at !== null && latest !== null && at > latest.ledgerVersion)
      return NodeError.versionNotFound(at, latest.ledgerVersion);
    return NodeError.refusedAtLedger(message);
  }

  /** The chain to key entries under; a read while it is not known is refused. */
  private chain(): number {
    const chain = this.nodes.chainId();
    if (chain === undefined) {
      throw NodeError.notReady(this.nodes.notReadyReason?.() ?? 'the chain the nodes are on is not known yet');
    }
    return chain;
  }
}
