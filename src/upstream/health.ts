// Node health: GET /v1 on every node every probeIntervalMs, and what a node's
// state is called (healthy, lagging, down, quarantined) for routing, /readyz and
// the metrics.
import type { Logger } from 'pino';
import { parseLedgerInfoJson, type LedgerInfo } from '../ledger/info.js';
import { NodeError } from '../errors.js';
import { CountedFailure, type NodeHealth, type NodeState } from './node-state.js';
import { isOverloaded, NodeShedding, shedBackOffMs } from './shedding.js';

/** When probe rounds run: a timer in production; a test may run each round itself. */
export interface ProbeSchedule {
  /** Runs `round` every `ms` until the returned stop is called. */
  every(ms: number, round: () => Promise<void>): () => void;
}

export const TIMER_SCHEDULE: ProbeSchedule = {
  every(ms, round) {
    const timer = setInterval(() => void round(), ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface ProberOptions {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
  schedule?: ProbeSchedule;
  /** the current node list (a reload replaces it) */
  nodes(): readonly NodeState[];
  /** a node answered with its snapshot, to a probe sent at `sentAt` (the node's clock), in `vendor`'s headers (null: none) */
  onSnapshot(node: NodeState, info: LedgerInfo, sentAt: number, vendor: string | null): void;
  /** a node's probe got no answer (`why`: in the proxy's words) */
  onFailure(node: NodeState, why: string): void;
  /** a whole round is done: these nodes answered it */
  onRound(answered: ReadonlySet<NodeState>): void;
}

export class Prober {
  private stopSchedule: (() => void) | null = null;
  /** the probe in flight per node, and when it was sent: a probe wanted meanwhile joins it */
  private readonly inFlight = new Map<NodeState, { sentAt: number; answer: Promise<LedgerInfo | null> }>();
  /** each node's last probe failure, while its last probe failed (for the not-ready message) */
  readonly failures = new Map<NodeState, string>();

  constructor(private readonly o: ProberOptions) {}

  /** Probes now, then every intervalMs. */
  start(): Promise<void> {
    this.stopSchedule = (this.o.schedule ?? TIMER_SCHEDULE).every(this.o.intervalMs, () => this.round());
    return this.round();
  }

  stop(): void {
    this.stopSchedule?.();
    this.stopSchedule = null;
  }

  /** One round: every node probed (a probe still in flight is joined), then onRound. */
  private async round(): Promise<void> {
    const nodes = this.o.nodes();
    const results = await Promise.all(nodes.map((node) => this.probe(node)));
    this.o.onRound(new Set(nodes.filter((_, i) => results[i] !== null)));
  }

  /**
   * The node's snapshot from a probe sent after `since` (ms; joined when one is in
   * flight), or null without an answer. A round takes any probe in flight.
   */
  probe(node: NodeState, since = Number.NEGATIVE_INFINITY): Promise<LedgerInfo | null> {
    const running = this.inFlight.get(node);
    if (running !== undefined && running.sentAt > since) return running.answer;
    const sentAt = node.clock();
    const answer = this.ask(node, sentAt).finally(() => {
      if (this.inFlight.get(node)?.answer === answer) this.inFlight.delete(node);
    });
    this.inFlight.set(node, { sentAt, answer });
    return answer;
  }

  /**
   * One probe. It always learns the node's ledger. What it does to the circuit:
   * closed, a failure counts like a failed call but a success does not reset the
   * count (GET /v1 answering says little about reads: a node failing every read
   * must still trip after failureThreshold); open and due for a trial, the probe
   * is the trial; open otherwise, nothing. A node shedding load (`overloaded`)
   * gives no snapshot and no failure: it is left alone for a moment (shedding.ts),
   * and a trial it answers so is passed (the node answers).
   */
  private async ask(node: NodeState, sentAt: number): Promise<LedgerInfo | null> {
    const circuit = node.circuit();
    let vendor: string | null = null;
    const get = async (): Promise<LedgerInfo> => {
      let info: LedgerInfo | null = null;
      try {
        const answer = await node.client.call({ method: 'GET', path: '/v1', timeoutMs: this.o.timeoutMs, headers: { accept: 'application/json' }, probe: true });
        // GET /v1 is not exempt from a node's load shedding: no answer, and no failure.
        if (isOverloaded(answer)) throw new NodeShedding(answer.retryAfterMs);
        info = answer.status === 200 ? parseLedgerInfoJson(answer.json ?? null) : null;
        if (info === null) throw new Error(`GET /v1 answered HTTP ${answer.status} without a ledger info`);
        vendor = answer.vendor ?? null;
      } catch (err) {
        throw err instanceof NodeShedding ? err : new CountedFailure(err);
      }
      return info;
    };
    try {
      const info = circuit === 'half-open' ? await node.guard(get) : await get();
      this.failures.delete(node);
      node.admitted(sentAt);
      this.o.onSnapshot(node, info, sentAt, vendor);
      return info;
    } catch (err) {
      if (err instanceof NodeShedding) {
        this.failures.set(node, 'shedding load (overloaded)');
        node.shed(shedBackOffMs(err.retryAfterMs, this.o.intervalMs));
        return null;
      }
      const cause = err instanceof CountedFailure ? err.cause : err;
      // NodeError messages are the proxy's own; anything else is named, not quoted.
      const why = cause instanceof NodeError || (cause instanceof Error && cause.message.startsWith('GET /v1')) ? cause.message : 'the probe failed';
      this.failures.set(node, why);
      if (circuit === 'closed' && err instanceof CountedFailure) await node.recordFailure();
      this.o.logger.debug({ upstream: node.name, err: why }, 'probe failed');
      this.o.onFailure(node, why);
      return null;
    }
  }
}

/** The most advanced version among nodes that are not quarantined. */
export function mostAdvanced(nodes: readonly NodeState[]): bigint | null {
  let top: bigint | null = null;
  for (const n of nodes) {
    if (n.quarantined || n.ledger === null) continue;
    if (top === null || n.ledger.ledgerVersion > top) top = n.ledger.ledgerVersion;
  }
  return top;
}

/** A node's state: quarantined, down (open circuit or never answered), lagging (beyond maxLag), or healthy. */
export function nodeHealth(node: NodeState, nodes: readonly NodeState[], maxLag: number): NodeHealth {
  if (node.quarantined) return 'quarantined';
  if (node.circuit() === 'open' || node.ledger === null) return 'down';
  const top = mostAdvanced(nodes);
  if (top !== null && node.ledger.ledgerVersion + BigInt(maxLag) < top) return 'lagging';
  return 'healthy';
}
