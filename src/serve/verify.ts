// The cross-check before storing forever (cache.verify): a pinned answer is stored
// only once a second node, one whose snapshot covers the answer's version, answered
// the same bytes. A read's reply never waits for it: the first answer is served,
// and stored once the second agrees. As eRPC's consensus policy with two
// participants and an agreement threshold of two, where a dispute stores nothing
// and blames no one: with two nodes there is no telling which one is wrong, and
// honest nodes of different configs render some JSON differently (api.md §9).
import type { Logger } from 'pino';
import type { NodeAnswer } from '../model/node-answer.js';
import type { ReadRequest } from '../model/read.js';
import { cacheability } from './policy.js';
import type { ReadContext } from '../model/read-context.js';
import type { NodeReader } from './ports.js';

type VerifyMode = 'off' | 'sample' | 'always';

/** agreed: stored; disagreed: the second node answered other bytes; unverified: no second node could answer. */
export type VerifyOutcome = 'agreed' | 'disagreed' | 'unverified';

export const VERIFY_OUTCOMES: readonly VerifyOutcome[] = ['agreed', 'disagreed', 'unverified'];

export interface VerifySettings {
  /** cache.verify.mode */
  mode: VerifyMode;
  /** cache.verify.sampleRatio: the share of answers checked in 'sample' mode */
  sampleRatio: number;
}

export interface AnswerVerifierDeps {
  settings: VerifySettings;
  nodes: NodeReader;
  /** routing.deadlineMs: the second node's read ends within it */
  deadlineMs: number;
  logger: Logger;
  /** told of every check's outcome, for metrics */
  onVerify?: (outcome: VerifyOutcome) => void;
  /** draws the sample: a number in [0, 1) (default Math.random) */
  random?: () => number;
}

/** What one check compares: the first node's answer to the read, and the version it belongs to. */
export interface FirstAnswer {
  req: ReadRequest;
  /** the version the answer is stored at: the second node must cover it */
  at: bigint;
  answer: NodeAnswer;
  context?: ReadContext;
}

const NOT_STORED: Promise<boolean> = Promise.resolve(false);

export class AnswerVerifier {
  /** keys being checked: one check per key at a time */
  private readonly checking = new Set<string>();
  private readonly random: () => number;

  constructor(private readonly deps: AnswerVerifierDeps) {
    this.random = deps.random ?? Math.random;
  }

  /**
   * null when the answer to be stored under `key` is stored as it is (mode off,
   * or not drawn by the sample). Otherwise the check: true once another node
   * agreed. It never rejects. While a check of `key` runs, another answer for it
   * is not stored (false), so a burst of misses makes one second call, not one each.
   */
  check(key: string, first: FirstAnswer): Promise<boolean> | null {
    const { mode, sampleRatio } = this.deps.settings;
    if (mode === 'off' || (mode === 'sample' && !(this.random() < sampleRatio))) return null;
    if (this.checking.has(key)) return NOT_STORED;
    this.checking.add(key);
    return this.outcome(first)
      .catch(() => 'unverified' as const)
      .then((outcome) => {
        this.checking.delete(key);
        this.deps.onVerify?.(outcome);
        return outcome === 'agreed';
      });
  }

  private async outcome(first: FirstAnswer): Promise<VerifyOutcome> {
    const { req, at, answer, context } = first;
    // A latest read is asked again pinned at the version its answer was read at.
    const asked = req.route.pin === 'version' && req.version === null ? req.route.pinnedAt?.(req, at) : req;
    if (asked === undefined) return this.unverified(first, 'the route has no pinned form');
    let second: NodeAnswer | null;
    try {
      second = await this.deps.nodes.readFromAnother(
        asked,
        { exclude: answer.upstream, covering: at },
        Date.now() + this.deps.deadlineMs,
        context,
      );
    } catch {
      return this.unverified(first, 'the second node did not answer');
    }
    if (second === null) return this.unverified(first, 'no other node covers the version');
    // A second answer that is no fact at the version (its node has not reached it, a 5xx) neither agrees nor disagrees.
    const verdict = cacheability(asked, second);
    if (!verdict.cacheable)
      return this.unverified(first, `the second node answered ${verdict.reason}`, second.upstream);
    const differs = difference(answer, second);
    if (differs === null) return 'agreed';
    this.deps.logger.warn(
      {
        reqId: first.context?.requestId,
        family: req.route.family,
        route: req.route.name,
        version: String(at),
        first: answer.upstream,
        second: second.upstream,
        differs,
      },
      'two nodes answered one read differently: the answer is not stored (cache.verify)',
    );
    return 'disagreed';
  }

  private unverified(first: FirstAnswer, reason: string, second?: string): 'unverified' {
    const { req, at, answer } = first;
    this.deps.logger.debug(
      {
        reqId: first.context?.requestId,
        family: req.route.family,
        route: req.route.name,
        version: String(at),
        first: answer.upstream,
        second,
        reason,
      },
      'answer not verified: not stored (cache.verify)',
    );
    return 'unverified';
  }
}

/**
 * What differs between two answers, as stored and replayed: null when they are
 * the same bytes. Exact, not canonical: nodes render JSON deterministically, so
 * two honest nodes differ in content (a node's page size, its ABIs, event
 * translation), which no canonical form would reconcile.
 */
export function difference(a: NodeAnswer, b: NodeAnswer): string | null {
  if (a.status !== b.status) return 'status';
  if (a.contentType !== b.contentType) return 'content type';
  if (a.cursor !== b.cursor) return 'cursor';
  if (a.gasUsed !== b.gasUsed) return 'gas used';
  return a.body.equals(b.body) ? null : 'body';
}

/** The warning at start when verification cannot succeed: fewer than two nodes. */
export function verifyWarning(settings: VerifySettings, upstreams: number): string | undefined {
  if (upstreams >= 2 || settings.mode === 'off' || (settings.mode === 'sample' && settings.sampleRatio === 0))
    return undefined;
  const which =
    settings.mode === 'always'
      ? 'no pinned answer is stored, and the change feed takes no page'
      : 'no sampled answer is stored, nor a sampled page of the change feed taken';
  return `cache.verify.mode is '${settings.mode}' but only one upstream is configured: a second node must answer the same bytes before an answer is stored, so ${which}`;
}
