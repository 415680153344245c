// A latest read (no ?ledger_version): one node call per canonical request in
// flight, its answer stored as the pinned answer at the version in its ledger
// header as every fetched answer is (store-verified.ts: with cache.verify, once
// a second node agreed at that version). With bounded staleness, a recent stored
// answer is served while one background refresh per key runs; with
// stale-if-error, a recent one stands in for a failed read. With the change feed
// (latest.changeFeed), the newest stored answer of a read is answered as a hit
// first, at the freshest version known, when the feed proves no version since
// wrote what it reads (SPEC-feed rule 3).
import type { Logger } from 'pino';
import type { CacheGeneration } from '../cache/generation.js';
import { cacheKeyText, latestKeyText } from '../cache/key.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { Watermark } from '../ledger/watermark.js';
import { asError } from '../process/log-error.js';
import type { FeedForwardReason } from '../model/feed-verdict.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { ReadRequest, StoredAnswer } from '../model/read.js';
import type { LatestAnswer, LatestAnswers } from './latest-answers.js';
import { lookupSpan, tracedLookup, underLookup } from './lookup-span.js';
import { cacheability } from './policy.js';
import type { ReadContext } from '../model/read-context.js';
import type { LatestFeed, NodeReader } from './ports.js';
import { type CacheTier, type ReadResult, readResult } from '../model/read-result.js';
import { SingleFlight } from './single-flight.js';
import { storeVerified } from './store-verified.js';
import { type CacheTiers, storedAnswer } from './tiers.js';
import type { AnswerVerifier } from './verify.js';

export interface LatestReadsDeps {
  /** the vendor in every cache key (its name is read at each use: with vendor: auto the nodes name it) */
  vendor: { readonly vendor: string };
  nodes: NodeReader;
  tiers: CacheTiers;
  /** part of every key: a purge of everything moves it on */
  generation: CacheGeneration;
  watermark: Watermark;
  logger: Logger;
  /** newest latest answers, for bounded staleness and stale-if-error */
  latest?: LatestAnswers;
  /** told of every stale reply, by reason, for metrics */
  onStale?: (reason: 'bound' | 'error') => void;
  /** cache.verify: which answers wait for a second node before they are stored */
  verifier: AnswerVerifier;
  /** the change feed's judgement of stored latest answers (latest.changeFeed) */
  feed?: LatestFeed;
  /** told of every latest read the feed answered, by route */
  onFeedAnswer?: (route: string) => void;
  /** told of every latest read of a route the feed covers that went to a node while the feed is on, by route and why */
  onFeedForward?: (route: string, reason: FeedForwardReason) => void;
}

export class LatestReads {
  private readonly flights = new SingleFlight<NodeAnswer>();

  constructor(private readonly deps: LatestReadsDeps) {}

  read(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> | ReadResult {
    return this.fromFeed(req, chain, context, true) ?? this.forwarded(req, chain, context);
  }

  /**
   * SPEC-feed rule 3: the newest stored answer (memory, then Redis) when the feed
   * proves nothing it reads was written since, as a hit at the freshest version
   * known. A read that finds the feed a page behind waits for it once (`mayWait`),
   * when it has an answer the feed could still judge. undefined: ask a node.
   */
  private fromFeed(
    req: ReadRequest,
    chain: number,
    context: ReadContext | undefined,
    mayWait: boolean,
  ): Promise<ReadResult> | ReadResult | undefined {
    const feed = this.deps.feed;
    if (feed === undefined || !feed.enabled || req.route.stateRead === undefined) return undefined;
    const latest = this.deps.watermark.current();
    if (latest === null || latest.chainId !== chain) return this.forwardedBecause(req, 'stopped');
    const { tiers } = this.deps;
    const key = latestKeyText(this.deps.vendor.vendor, chain, req, this.deps.generation.current);
    const stored = tiers.memory.get(key);
    if (feed.covers(latest.ledgerVersion)) {
      const verdict = stored === undefined ? 'not_stored' : feed.verdict(req, stored, latest.ledgerVersion);
      if (verdict === 'unchanged') return this.feedHit(req, stored!, latest, 'memory');
      // Another instance may have stored a newer answer.
      if (tiers.hasShared) return this.fromShared(req, chain, key, stored, verdict, latest, context);
      return this.forwardedBecause(req, verdict);
    }
    if (!mayWait) return this.forwardedBecause(req, feed.uncovered());
    const soFar =
      stored === undefined ? (tiers.hasShared ? 'unchanged' : 'not_stored') : feed.verdictSoFar(req, stored);
    if (soFar !== 'unchanged') return this.forwardedBecause(req, soFar);
    const covered = feed.whenCovers(latest.ledgerVersion);
    if (covered === undefined) return this.forwardedBecause(req, feed.uncovered());
    return covered.then(() => this.fromFeed(req, chain, context, false) ?? this.forwarded(req, chain, context));
  }

  /** Counts why a covered read goes to a node; undefined, for fromFeed to say so. */
  private forwardedBecause(req: ReadRequest, reason: FeedForwardReason): undefined {
    this.deps.onFeedForward?.(req.route.name, reason);
    return undefined;
  }

  private forwarded(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> {
    const lookup = lookupSpan(context);
    if (lookup === undefined || context === undefined) return this.lookUp(req, chain, context);
    return tracedLookup(lookup, this.lookUp(req, chain, underLookup(context, lookup)));
  }

  private async lookUp(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> {
    // The chain is in the key: a remembered latest answer of another chain is never served.
    const flightKey = `${chain}\n${req.route.name}\n${req.format}\n${req.identity}`;
    const latest = this.deps.latest;
    const stale = latest?.withinBound(flightKey, this.deps.watermark.current()?.ledgerVersion ?? null);
    if (stale !== undefined) {
      // Stale-while-revalidate: one background refresh per key at a time.
      if (stale.refresh) {
        const { promise } = this.flights.do(flightKey, () => this.fetch(req, flightKey));
        promise.catch((err) => this.deps.logger.debug({ err: asError(err) }, 'background refresh failed'));
      }
      return this.stale(stale.entry, 'bound');
    }
    // A read that joins another's node call costs nothing; one that starts a call may be refused it.
    const { promise, shared } = this.flights.do(flightKey, () => {
      const refused = context?.nodeCallRefusal() ?? null;
      if (refused !== null) throw refused;
      return this.fetch(req, flightKey, context);
    });
    let answer: NodeAnswer;
    try {
      answer = await promise;
    } catch (err) {
      const fallback = latest?.forError(flightKey);
      if (fallback === undefined) throw err;
      return this.stale(fallback, 'error');
    }
    if (answer.status >= 500) {
      const fallback = latest?.forError(flightKey);
      if (fallback !== undefined) return this.stale(fallback, 'error');
    }
    // A forwarded latest read keeps the answering node's snapshot: it says at
    // which version the data was read.
    return readResult(answer, {
      ledger: answer.ledger,
      cache: shared ? 'COALESCED' : 'MISS',
      upstream: answer.upstream,
    });
  }

  /**
   * The shared tier's newest answer, when the feed proves it still the latest;
   * else the read goes on as usual, for the reason `local` (the memory tier's
   * answer, if any) was judged by, unless the shared one was judged.
   */
  private async fromShared(
    req: ReadRequest,
    chain: number,
    key: string,
    local: StoredAnswer | undefined,
    localVerdict: FeedForwardReason,
    latest: LedgerInfo,
    context?: ReadContext,
  ): Promise<ReadResult> {
    const { tiers, feed } = this.deps;
    const since = tiers.purges;
    const shared = await tiers.fromShared(key);
    let reason = localVerdict;
    if (shared !== undefined && (local === undefined || shared.version > local.version)) {
      const verdict = feed!.verdict(req, shared, latest.ledgerVersion);
      if (verdict === 'unchanged') {
        tiers.remember(key, shared, since);
        return this.feedHit(req, shared, latest, 'redis');
      }
      reason = verdict;
    }
    this.forwardedBecause(req, reason);
    return this.forwarded(req, chain, context);
  }

  /** A hit: the stored bytes (a 404's restated at L), with the headers of the freshest version known, L, at which they are the latest. */
  private feedHit(req: ReadRequest, stored: StoredAnswer, latest: LedgerInfo, tier: CacheTier): ReadResult {
    this.deps.onFeedAnswer?.(req.route.name);
    const answer = this.deps.feed!.answerAt(stored, latest.ledgerVersion);
    return readResult(answer, { ledger: latest, cache: 'HIT', tier });
  }

  /** A stale reply carries its own snapshot, never the watermark, so its age is visible. */
  private stale(entry: LatestAnswer, reason: 'bound' | 'error'): ReadResult {
    this.deps.onStale?.(reason);
    return readResult(entry.answer, { ledger: entry.ledger, cache: 'STALE' });
  }

  private async fetch(req: ReadRequest, flightKey: string, context?: ReadContext): Promise<NodeAnswer> {
    const { tiers, generation } = this.deps;
    const since = tiers.purges;
    const answer = await this.deps.nodes.read(req, { context });
    const verdict = cacheability(req, answer);
    if (!verdict.cacheable) {
      this.deps.logger.debug(
        { reqId: context?.requestId, route: req.route.name, reason: verdict.reason },
        'latest answer not stored',
      );
      return answer;
    }
    const ledger = answer.ledger;
    if (ledger === null) return answer;
    // Stored under the chain the answer itself reports, and only while that is the nodes' chain.
    const { ledgerVersion: version, chainId } = ledger;
    const stored = storedAnswer(answer, version);
    const storing = storeVerified(this.deps, {
      key: cacheKeyText(this.deps.vendor.vendor, chainId, req, version, generation.current),
      answer: stored,
      family: req.route.family,
      chain: chainId,
      since,
      first: { req, at: version, answer, context },
    });
    // Kept for stale replies and for the feed as it is stored: at once, or once another node agreed.
    const keep = (): void => {
      if (tiers.purges !== since) return;
      this.deps.latest?.remember(flightKey, stored, ledger);
      if (this.deps.feed?.enabled === true && req.route.stateRead !== undefined) {
        const key = latestKeyText(this.deps.vendor.vendor, chainId, req, generation.current);
        // A slower node's older answer does not replace a newer one.
        const held = tiers.memory.get(key);
        if (held === undefined || held.version < version)
          void tiers.store({ key, answer: stored, family: req.route.family, since });
      }
    };
    if (storing === undefined) return answer;
    if ('written' in storing) keep();
    else
      void storing.verifying.then((agreed) => {
        if (agreed) keep();
      });
    return answer;
  }
}
