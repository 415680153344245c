// Node health: GET /v1 on every node every probeIntervalMs, and what a node's
// state is called (healthy, lagging, down, quarantined) for routing, /readyz and
// the metrics.
import type { Logger } from 'pino';
import { parseLedgerInfoJson, type LedgerInfo } from '../ledger/info.js';
import { CountedFailure, type NodeHealth, type NodeState } from './node-state.js';

export interface ProberOptions {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
  /** the current node list (a reload replaces it) */
  nodes(): readonly NodeState[];
  /** a node answered with its snapshot */
  onSnapshot(node: NodeState, info: LedgerInfo): void;
  /** a whole round is done: these nodes answered it */
  onRound(answered: ReadonlySet<NodeState>): void;
}

export class Prober {
  private timer: NodeJS.Timeout | null = null;
  /** each node's last probe failure, while its last probe failed (for the not-ready message) */
  readonly failures = new Map<NodeState, string>();

  constructor(private readonly o: ProberOptions) {}

  /** Probes now, then every intervalMs. */
  start(): Promise<void> {
    this.timer = setInterval(() => void this.probeAll(), this.o.intervalMs);
    this.timer.unref();
    return this.probeAll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async probeAll(): Promise<void> {
    const nodes = this.o.nodes();
    const results = await Promise.all(nodes.map((node) => this.probe(node)));
    this.o.onRound(new Set(nodes.filter((_, i) => results[i])));
  }

  /**
   * One probe. It always learns the node's ledger. What it does to the circuit:
   * closed, a failure counts like a failed call but a success does not reset the
   * count (GET /v1 answering says little about reads: a node failing every read
   * must still trip after failureThreshold); open and due for a trial, the probe
   * is the trial; open otherwise, nothing. True when the node answered.
   */
  async probe(node: NodeState): Promise<boolean> {
    const circuit = node.circuit();
    const get = async (): Promise<LedgerInfo> => {
      let info: LedgerInfo | null = null;
      try {
        const answer = await node.client.call({ method: 'GET', path: '/v1', timeoutMs: this.o.timeoutMs, headers: { accept: 'application/json' } });
        info = answer.status === 200 ? parseLedgerInfoJson(JSON.parse(answer.body.toString('utf8'))) : null;
        if (info === null) throw new Error(`GET /v1 answered HTTP ${answer.status}`);
      } catch (err) {
        throw new CountedFailure(err);
      }
      return info;
    };
    try {
      const info = circuit === 'half-open' ? await node.guard(get) : await get();
      this.failures.delete(node);
      this.o.onSnapshot(node, info);
      return true;
    } catch (err) {
      const cause = err instanceof CountedFailure ? err.cause : err;
      const message = cause instanceof Error ? cause.message : String(cause);
      this.failures.set(node, message);
      if (circuit === 'closed' && err instanceof CountedFailure) await node.recordFailure();
      this.o.logger.debug({ upstream: node.name, err: message }, 'probe failed');
      return false;
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
