// The cross-instance side of a pinned miss (DESIGN "Cache keys and entries"):
// Redis is asked first; then, with the fill lock on, one instance takes a short
// lock and asks a node while the others wait for the outcome it publishes. This
// module owns the lock, the wait and the publish; the caller says how to ask a
// node, whether the answer is stored, and whether it is a "not yet", which
// another instance's waiters never take (they ask a node themselves).
import type { FillLock, FillOutcome } from '../cache/store.js';
import { ERROR_CONTENT_TYPE, errorBody, NodeError } from '../errors.js';
import { ATTR, SPAN, SpanKind, type TraceScope } from '../tracing/scope.js';
import type { StoredAnswer } from '../model/read.js';
import type { SharedStore } from './ports.js';
import type { CacheTier } from '../model/read-result.js';

export interface FillSettings {
  /** cache.redis.fillLock: concurrent misses across instances make one node call */
  fillLock: boolean;
  /** cache.redis.fillLockMs: how long the lock lives, and the longest wait for its holder */
  fillLockMs: number;
}

/** Where a fill's answer came from. */
export interface Filled {
  answer: StoredAnswer;
  /** the tier it was found in (or, for a waiter, stored in by the holder); absent: a node answered */
  tier?: CacheTier;
  /** the node that answered */
  upstream?: string;
  /** another instance's one-off answer, relayed */
  relayed?: true;
  /** a "not yet" answer from this instance's node call (never from another instance) */
  notYet?: NotYet;
}

/**
 * A "not yet" answer (policy.ts isNotYet): when the node call that got it was
 * sent, as the caller counts its reads and sends (a sequence, not a time), so
 * the reads that came after it know to ask again.
 */
interface NotYet {
  sent: number;
}

/** What the caller's node call gave. */
export interface NodeFill {
  answer: StoredAnswer;
  upstream: string;
  /** settles once Redis has the answer; absent: the answer is not stored (a one-off) */
  written?: Promise<void>;
  /**
   * cache.verify: the answer is stored only if another node agrees, after the
   * reply. True once it is stored (Redis has it), false when it is not.
   */
  verifying?: Promise<boolean>;
  /** a "not yet" answer: published to another instance's waiters as 'gave-up', never as the answer */
  notYet?: NotYet;
  /**
   * An answer to keep that is not kept: a purge began, or the nodes left the chain,
   * after the read did. Another instance's waiters may have come since: 'gave-up' to
   * them too, so each asks a node itself.
   */
  unkept?: true;
}

const NOTHING_WRITTEN: Promise<void> = Promise.resolve();

/** How one pinned miss is filled, as its caller knows it. */
export interface FillSteps {
  /** refuses an entry found in Redis that no longer answers (a transaction whose version is pruned) */
  usable(found: StoredAnswer): boolean;
  /** the refusal of a node call, checked once Redis has no answer, before any lock is taken */
  refusal(): NodeError | null;
  /** asks a node, and stores the answer when it is cacheable */
  fromNode(): Promise<NodeFill>;
  /** the lookup's span, while tracing is on: the Redis lookup's goes under it */
  trace?: TraceScope;
}

export class FillCoordinator {
  constructor(private readonly shared: { store: SharedStore; settings: FillSettings } | undefined) {}

  /**
   * Fills one pinned miss whose shared-store key is `key`. `deadlineAt` bounds the
   * wait for another instance's fill.
   */
  async fill(key: string, deadlineAt: number, steps: FillSteps): Promise<Filled> {
    const { usable, fromNode } = steps;
    const shared = this.shared;
    // A Redis (on a Cluster, the node serving this key) that is down or stalled
    // costs at most one command timeout: no further lookups, and no wait for a lock.
    if (shared === undefined || !shared.store.isHealthy(key)) return asked(await nodeCall(steps));
    const { store, settings } = shared;
    const found = (await (steps.trace === undefined ? store.get(key) : tracedGet(store, key, steps.trace))) as
      | StoredAnswer
      | undefined;
    if (found !== undefined && usable(found)) return { answer: found, tier: 'redis' };
    // Refused before the lock: another instance's waiters never hear of this request's refusal.
    const refused = steps.refusal();
    if (refused !== null) throw refused;
    const { fillLock, fillLockMs } = settings;
    if (!fillLock || !store.isHealthy(key)) return asked(await fromNode());
    const lock = await store.tryLock(key, fillLockMs);
    if (lock === 'failed') return asked(await fromNode());
    if (lock !== 'held') return this.fillHolding(store, key, lock, fromNode);
    // At most half of what is left, so the node still has time if the fill never comes.
    const outcome = await store.awaitFill(key, Math.min(fillLockMs, (deadlineAt - Date.now()) / 2));
    if (outcome === undefined || outcome === 'gave-up') return asked(await fromNode());
    return outcome.stored ? { answer: outcome.answer, tier: 'redis' } : { answer: outcome.answer, relayed: true };
  }

  /** Asks a node while holding the lock, and tells the waiters what came of it. */
  private async fillHolding(
    store: SharedStore,
    key: string,
    lock: FillLock,
    fromNode: () => Promise<NodeFill>,
  ): Promise<Filled> {
    let node: NodeFill;
    try {
      node = await fromNode();
    } catch (err) {
      // Waiters get the proxy's own error as a one-off: they learn now, not at lock expiry.
      publish(
        store,
        key,
        lock,
        err instanceof NodeError ? { answer: errorAnswer(err), stored: false } : 'gave-up',
        NOTHING_WRITTEN,
      );
      throw err;
    }
    // A waiter on another instance found this lock taken, so it may have come
    // after this call was sent, and only clocks compared across machines could
    // tell: a "not yet" is no answer for it. It is told to ask a node itself,
    // and the answer is never kept at the outcome key.
    if (node.notYet !== undefined || node.unkept) publish(store, key, lock, 'gave-up', NOTHING_WRITTEN);
    else if (node.verifying !== undefined) publishChecked(store, key, lock, node.answer, node.verifying);
    else
      publish(
        store,
        key,
        lock,
        { answer: node.answer, stored: node.written !== undefined },
        node.written ?? NOTHING_WRITTEN,
      );
    return asked(node);
  }
}

/** A node call, unless it is refused. */
async function nodeCall(steps: FillSteps): Promise<NodeFill> {
  const refused = steps.refusal();
  if (refused !== null) throw refused;
  return steps.fromNode();
}

/** A Redis lookup in a span of its own (a lookup that failed reads as not found, as it does untraced). */
async function tracedGet(store: SharedStore, key: string, trace: TraceScope): Promise<StoredAnswer | undefined> {
  const span = trace.child(SPAN.redis, SpanKind.CLIENT);
  const found = (await store.get(key)) as StoredAnswer | undefined;
  span?.end({ [ATTR.found]: found !== undefined });
  return found;
}

function asked(node: NodeFill): Filled {
  return { answer: node.answer, upstream: node.upstream, notYet: node.notYet };
}

/**
 * Publishes the fill's outcome at once (waiters need not read the entry), and
 * releases the lock once both the outcome and the shared write have landed, so
 * an instance that takes the lock next finds the entry.
 */
function publish(store: SharedStore, key: string, lock: FillLock, outcome: FillOutcome, written: Promise<void>): void {
  void Promise.all([store.publishFill(key, outcome), written]).finally(() => lock.release());
}

/**
 * An answer under cache.verify's check: a one-off for the waiters now (they must
 * not keep what may be one node's lie); when the check is over, for those who came
 * since, the stored outcome, or 'gave-up' (they ask a node themselves) when it is
 * not stored. The lock is held until then, so an instance that takes it next finds
 * the entry if there is one.
 */
function publishChecked(
  store: SharedStore,
  key: string,
  lock: FillLock,
  answer: StoredAnswer,
  verifying: Promise<boolean>,
): void {
  void store
    .publishFill(key, { answer, stored: false })
    .then(() => verifying)
    .then((stored) => store.publishFill(key, stored ? { answer, stored: true } : 'gave-up'))
    .catch(() => undefined)
    .finally(() => lock.release());
}

/** The proxy's error reply, as a one-off answer for another instance's waiters (its version is never read). */
function errorAnswer(err: NodeError): StoredAnswer {
  return { status: err.status, contentType: ERROR_CONTENT_TYPE, body: errorBody(err), version: 0n };
}
