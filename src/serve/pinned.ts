// A pinned read: at ?ledger_version=N, or of a transaction or block its path names.
//   pruned? → 410; memory → (one fill per key: Redis → a node, FillCoordinator)
//   → stored in both tiers when the answer is immutable (with cache.verify, once
//   a second node agreed, after the reply).
// Synchronous on a memory hit: the hot path takes no async hop and allocates
// nothing but its result. A "not yet" answer (policy.ts isNotYet) answers only
// the reads that were waiting when its node call was sent; one that joined the
// fill after that asks again.
import type { Logger } from 'pino';
import type { CacheGeneration } from '../cache/generation.js';
import { NodeError } from '../errors.js';
import type { Watermark } from '../ledger/watermark.js';
import type { ReadRequest, StoredAnswer } from '../model/read.js';
import type { FillCoordinator, Filled, NodeFill } from './fill.js';
import { KeyMemo } from './key-memo.js';
import { endLookup, lookupSpan, tracedLookup, underLookup } from './lookup-span.js';
import { cacheability, isNotYet } from './policy.js';
import type { ReadContext } from '../model/read-context.js';
import type { NodeReader } from './ports.js';
import { type ReadResult, readResult } from '../model/read-result.js';
import { SingleFlight } from './single-flight.js';
import { storeVerified } from './store-verified.js';
import { type CacheTiers, storedAnswer } from './tiers.js';
import type { AnswerVerifier } from './verify.js';

export interface PinnedReadsDeps {
  /** the vendor in every cache key (its name is read at each use: with vendor: auto the nodes name it) */
  vendor: { readonly vendor: string };
  nodes: NodeReader;
  tiers: CacheTiers;
  /** part of every key: a purge of everything moves it on */
  generation: CacheGeneration;
  fills: FillCoordinator;
  /** routing.deadlineMs: a miss, waiting for another instance's fill included, ends within it */
  deadlineMs: number;
  watermark: Watermark;
  logger: Logger;
  /** cache.verify: which answers wait for a second node before they are stored */
  verifier: AnswerVerifier;
}

export class PinnedReads {
  private readonly flights = new SingleFlight<Filled>();
  private readonly keys: KeyMemo;
  /**
   * Orders the start of each read past the memory tier against the sending of
   * each node call: a sequence within this process, no clock.
   */
  private sequence = 0;

  constructor(private readonly deps: PinnedReadsDeps) {
    this.keys = new KeyMemo(deps.vendor);
  }

  read(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> | ReadResult {
    return this.readSince(req, chain, context);
  }

  /** `began`: for a read that asks again, where in the sequence it first began waiting. */
  private readSince(
    req: ReadRequest,
    chain: number,
    context: ReadContext | undefined,
    began?: number,
  ): Promise<ReadResult> | ReadResult {
    const at = req.route.pruneAt(req);
    const pruned = this.prunedError(req, at);
    if (pruned !== undefined) throw pruned;
    const key = this.keys.text(req, chain, this.deps.generation.current);
    const memory = this.deps.tiers.memory;
    // undefined while tracing is off: then nothing below makes a span or allocates for one.
    const lookup = lookupSpan(context);
    const hit = memory.get(key);
    if (hit !== undefined) {
      if (!this.outlived(at, hit)) {
        const result = readResult(hit, { ledger: this.deps.watermark.current(), cache: 'HIT', tier: 'memory' });
        if (lookup !== undefined) endLookup(lookup, result);
        return result;
      }
      memory.delete(key);
    }
    const forNode = lookup === undefined || context === undefined ? context : underLookup(context, lookup);
    const start = began ?? ++this.sequence;
    // A read that begins after a purge joins no fill begun before it: that answer may be the one purged.
    const purges = this.deps.tiers.purges;
    const flight = purges === 0 ? key : `${purges}\n${key}`;
    const { promise, shared } = this.flights.do(flight, () => this.fill(key, chain, req, at, forNode));
    const result = promise.then(
      // A "not yet" from a call sent before this read began may be out of date: it asks again.
      (filled) =>
        filled.notYet !== undefined && filled.notYet.sent < start
          ? this.readSince(req, chain, context, start)
          : this.served(req, at, filled, shared),
      // The read this one joined was refused a node call for its own tenant: this one asks for itself.
      (err: unknown) => {
        if (shared && err instanceof NodeError && err.reason === 'rate_limited') return this.read(req, chain, context);
        throw err;
      },
    );
    return lookup === undefined ? result : tracedLookup(lookup, result);
  }

  /**
   * The 410 a node would answer before any lookup: the version or block height
   * the request names (`at`: its route's pruneAt) is below every node's history.
   */
  private prunedError(req: ReadRequest, at: bigint | null): NodeError | undefined {
    if (at === null) return undefined;
    if (req.route.pruneBy === 'height')
      return this.deps.nodes.isBlockPruned(at) ? NodeError.blockPruned(at) : undefined;
    return this.deps.nodes.isPruned(at) ? NodeError.pruned(at) : undefined;
  }

  /**
   * A stored answer to a request that names no prune line (a transaction by
   * hash) whose own version is pruned: a node has no 410 for it (it answers 404),
   * so the entry is no longer an answer. `at`: the request's pruneAt.
   */
  private outlived(at: bigint | null, answer: StoredAnswer): boolean {
    return at === null && this.deps.nodes.isPruned(answer.version);
  }

  /** `at`: the request's pruneAt. */
  private served(req: ReadRequest, at: bigint | null, filled: Filled, shared: boolean): ReadResult {
    // The prune line may have moved while Redis or a node answered: a node
    // asked now would say 410, so the proxy does too.
    const prunedNow = this.prunedError(req, at);
    if (prunedNow !== undefined) throw prunedNow;
    const ledger = this.deps.watermark.current();
    if (filled.relayed) return readResult(filled.answer, { ledger, cache: 'COALESCED' });
    if (filled.tier !== undefined)
      return readResult(filled.answer, { ledger, cache: shared ? 'COALESCED' : 'HIT', tier: filled.tier });
    return readResult(filled.answer, { ledger, cache: shared ? 'COALESCED' : 'MISS', upstream: filled.upstream });
  }

  /** `at`: the request's pruneAt. */
  private async fill(
    key: string,
    chain: number,
    req: ReadRequest,
    at: bigint | null,
    context: ReadContext | undefined,
  ): Promise<Filled> {
    const deadlineAt = Date.now() + this.deps.deadlineMs;
    const shared = this.keys.shared(req, key);
    const since = this.deps.tiers.purges;
    const filled = await this.deps.fills.fill(shared, deadlineAt, {
      usable: (found) => !this.outlived(at, found),
      refusal: () => context?.nodeCallRefusal() ?? null,
      trace: context?.trace,
      fromNode: () => this.fromNode(req, chain, { key, shared, since }, deadlineAt, context),
    });
    if (filled.tier === 'redis') this.deps.tiers.remember(key, filled.answer, since);
    return filled;
  }

  /** Asks a node, and stores its answer when it is immutable (`keyed.since`: the tiers' purges when the read began). */
  private async fromNode(
    req: ReadRequest,
    chain: number,
    keyed: { key: string; shared: string; since: number },
    deadlineAt: number,
    context: ReadContext | undefined,
  ): Promise<NodeFill> {
    // Counted before the call: a read that comes while the call waits for a node's budget asks again, which is never wrong.
    const sent = ++this.sequence;
    const answer = await this.deps.nodes.read(req, { deadlineAt, context });
    let verdict = cacheability(req, answer);
    const at = verdict.cacheable ? req.route.answerVersion(req, answer) : null;
    if (verdict.cacheable && at === null)
      verdict = { cacheable: false, reason: 'the version of the answer is not known' };
    const stored = storedAnswer(answer, at ?? 0n);
    if (!verdict.cacheable) {
      this.deps.logger.debug(
        {
          reqId: context?.requestId,
          route: req.route.name,
          version: req.version === null ? undefined : String(req.version),
          reason: verdict.reason,
        },
        'answer not cached',
      );
      return { answer: stored, upstream: answer.upstream, notYet: isNotYet(req, answer) ? { sent } : undefined };
    }
    // An answer from after a chain change is not stored under the old chain's key.
    const { key, shared, since } = keyed;
    const storing = storeVerified(this.deps, {
      key,
      shared,
      answer: stored,
      family: req.route.family,
      chain,
      since,
      first: { req, at: at!, answer, context },
    });
    if (storing === undefined) return { answer: stored, upstream: answer.upstream, unkept: true };
    return { answer: stored, upstream: answer.upstream, ...storing };
  }
}
