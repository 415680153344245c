// A latest read (no ?ledger_version): one node call per canonical request in
// flight, its answer stored as the pinned answer at the version in its ledger
// header (with cache.verify, once a second node agreed at that version). With
// bounded staleness, a recent answer is served while one background refresh per
// key runs; with stale-if-error, a recent answer stands in for a failed read.
import type { Logger } from 'pino';
import type { CacheGeneration } from '../cache/generation.js';
import { cacheKeyText } from '../cache/key.js';
import type { Watermark } from '../ledger/watermark.js';
import { asError } from '../process/log-error.js';
import type { NodeAnswer } from '../model/node-answer.js';
import type { ReadRequest } from '../model/read.js';
import type { LatestAnswer, LatestAnswers } from './latest-answers.js';
import { lookupSpan, tracedLookup, underLookup } from './lookup-span.js';
import { cacheability } from './policy.js';
import type { NodeReader, ReadContext } from './ports.js';
import { type ReadResult, readResult } from '../model/read-result.js';
import { SingleFlight } from './single-flight.js';
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
}

export class LatestReads {
  private readonly flights = new SingleFlight<NodeAnswer>();

  constructor(private readonly o: LatestReadsDeps) {}

  read(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> {
    const lookup = lookupSpan(context);
    if (lookup === undefined || context === undefined) return this.lookUp(req, chain, context);
    return tracedLookup(lookup, this.lookUp(req, chain, underLookup(context, lookup)));
  }

  private async lookUp(req: ReadRequest, chain: number, context?: ReadContext): Promise<ReadResult> {
    // The chain is in the key: a remembered latest answer of another chain is never served.
    const flightKey = `${chain}\n${req.route.name}\n${req.format}\n${req.identity}`;
    const latest = this.o.latest;
    const stale = latest?.withinBound(flightKey, this.o.watermark.current()?.ledgerVersion ?? null);
    if (stale !== undefined) {
      // Stale-while-revalidate: one background refresh per key at a time.
      if (stale.refresh) {
        const { promise } = this.flights.do(flightKey, () => this.fetch(req, flightKey));
        promise.catch((err) => this.o.logger.debug({ err: asError(err) }, 'background refresh failed'));
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
    return readResult(answer, answer.ledger, shared ? 'COALESCED' : 'MISS', undefined, answer.upstream);
  }

  /** A stale reply carries its own snapshot, never the watermark, so its age is visible. */
  private stale(entry: LatestAnswer, reason: 'bound' | 'error'): ReadResult {
    this.o.onStale?.(reason);
    return readResult(entry.answer, entry.ledger, 'STALE');
  }

  private async fetch(req: ReadRequest, flightKey: string, context?: ReadContext): Promise<NodeAnswer> {
    const { tiers, generation } = this.o;
    const since = tiers.purges;
    const answer = await this.o.nodes.read(req, undefined, context);
    const verdict = cacheability(req, answer);
    // Stored under the chain the answer itself reports, and only while that is the nodes' chain.
    if (verdict.cacheable && answer.ledger !== null && answer.ledger.chainId === this.o.nodes.chainId()) {
      const { ledgerVersion: version, chainId } = answer.ledger;
      const stored = storedAnswer(answer, version);
      const key = cacheKeyText(this.o.vendor.vendor, chainId, req, version, generation.current);
      const check = this.o.verifier.check(key, { req, at: version, answer, context });
      if (check === null) void tiers.store(key, stored, req.route.family, since);
      else
        void check.then((agreed) => {
          if (agreed && chainId === this.o.nodes.chainId()) void tiers.store(key, stored, req.route.family, since);
        });
      if (tiers.purges === since) this.o.latest?.remember(flightKey, stored, answer.ledger);
    } else if (!verdict.cacheable) {
      this.o.logger.debug(
        { reqId: context?.requestId, route: req.route.name, reason: verdict.reason },
        'latest answer not stored',
      );
    }
    return answer;
  }
}
