// Node state changes, each logged once when it happens (never once per probe) and
// counted: a node going down and coming up, its circuit opening and closing, its
// quarantine (another chain, or misbehaving) and release, falling behind and
// catching up, shedding load and admitting again, and a new chain adopted. Changes for the worse are logged at warn,
// changes for the better at info, each with the node's name and its url (origin and path: which
// node a name stands for is the operator's to see, never a client's).
import type { Logger } from 'pino';
import { PROBE_EXPECTED } from './health.js';
import type { NodeHealth, NodeState } from './node-state.js';

export type NodeTransition =
  | 'down'
  | 'up'
  | 'breaker_open'
  | 'breaker_closed'
  | 'quarantined'
  | 'released'
  | 'lagging'
  | 'caught_up'
  | 'shedding'
  | 'admitting'
  | 'chain_adopted';

/** What was last logged of one node. */
interface Seen {
  up?: boolean;
  quarantine?: 'chain' | 'misbehaving' | null;
  lagging?: boolean;
  shedding?: boolean;
}

export class NodeTransitions {
  private readonly seen = new WeakMap<NodeState, Seen>();

  constructor(
    private readonly logger: Logger,
    /** told of every transition, for metrics (`upstream` is '' for the chain's) */
    private readonly onTransition: (upstream: string, state: NodeTransition) => void = () => undefined,
  ) {}

  /** A probe got the ledger info. */
  probeAnswered(node: NodeState): void {
    this.reach(node, true);
  }

  /** A probe got no ledger info (`got`: what it got instead, in the proxy's words). */
  probeMissed(node: NodeState, got: string): void {
    this.reach(node, false, got);
  }

  private reach(node: NodeState, up: boolean, got?: string): void {
    const seen = this.of(node);
    if (seen.up === up) return;
    seen.up = up;
    if (up)
      this.info(
        node,
        'up',
        { version: node.ledger === null ? undefined : String(node.ledger.ledgerVersion) },
        'upstream up: its probe answers',
      );
    else {
      const msg = `upstream down: its probe (GET ${node.client.probePath}) got ${got}, expected ${PROBE_EXPECTED}; it takes no traffic until it answers again`;
      this.warn(node, 'down', { got, expected: PROBE_EXPECTED }, msg);
    }
  }

  /** The circuit opened or closed (told by the breaker itself, once per change). */
  circuit(node: NodeState, open: boolean): void {
    if (open)
      this.warn(
        node,
        'breaker_open',
        {},
        'upstream circuit open: its calls failed in a row; it takes no traffic until a trial call succeeds',
      );
    else this.info(node, 'breaker_closed', {}, 'upstream circuit closed: a trial call succeeded');
  }

  /** Quarantine and release, from the node's state now. */
  quarantine(node: NodeState, expectedChain: number | undefined): void {
    const seen = this.of(node);
    const reason = node.quarantineReason();
    if ((seen.quarantine ?? null) === reason) return;
    const was = seen.quarantine ?? null;
    seen.quarantine = reason;
    if (reason === 'chain') {
      const fields = { reason, chainId: node.ledger?.chainId, expected: expectedChain };
      this.warn(
        node,
        'quarantined',
        fields,
        'UPSTREAM QUARANTINED: it reports another chain id; it gets no traffic and nothing it says is cached',
      );
    } else if (reason === 'misbehaving') {
      const fields = { reason, untilMs: node.misbehavingUntil - node.clock() };
      this.warn(
        node,
        'quarantined',
        fields,
        'UPSTREAM QUARANTINED: it answered implausible ledger versions again and again; it gets no traffic for a while',
      );
    } else if (was !== null) {
      this.info(node, 'released', { reason: was }, 'upstream quarantine lifted');
    }
  }

  /** Falling behind and catching up, from the node's health after a probe round. */
  lag(node: NodeState, health: NodeHealth): void {
    // Only an up node of the chain is judged: a node down or quarantined says nothing of its lag.
    if (health !== 'healthy' && health !== 'lagging') return;
    const seen = this.of(node);
    const lagging = health === 'lagging';
    if ((seen.lagging ?? false) === lagging) return;
    seen.lagging = lagging;
    if (lagging)
      this.warn(
        node,
        'lagging',
        { version: String(node.ledger?.ledgerVersion) },
        'upstream lagging: further behind the most advanced node than routing.maxLagVersions; it takes no latest reads',
      );
    else
      this.info(
        node,
        'caught_up',
        { version: String(node.ledger?.ledgerVersion) },
        'upstream caught up: within routing.maxLagVersions of the most advanced node again',
      );
  }

  /** The node answered `overloaded` (`backOffMs`: how long it is left alone), or a probe passed its admission again. */
  shedding(node: NodeState, shedding: boolean, backOffMs: number): void {
    const seen = this.of(node);
    if ((seen.shedding ?? false) === shedding) return;
    seen.shedding = shedding;
    if (shedding)
      this.warn(
        node,
        'shedding',
        { backOffMs },
        'upstream shedding load: it answered overloaded; it takes no calls for a moment, its health is unchanged',
      );
    else this.info(node, 'admitting', {}, 'upstream admitting again: a probe passed its load shedding');
  }

  /** Every answering node reported a new chain for long enough: it is adopted. */
  chainAdopted(from: number, to: number, rounds: number): void {
    this.onTransition('', 'chain_adopted');
    this.logger.warn(
      { from, to },
      `chain changed: every answering node has reported chain ${to} for ${rounds} probe rounds (a devnet reset?); adopted`,
    );
  }

  private of(node: NodeState): Seen {
    let seen = this.seen.get(node);
    if (seen === undefined) this.seen.set(node, (seen = {}));
    return seen;
  }

  private warn(node: NodeState, state: NodeTransition, fields: Record<string, unknown>, msg: string): void {
    this.onTransition(node.name, state);
    this.logger.warn({ upstream: node.name, url: node.client.shownUrl, transition: state, ...fields }, msg);
  }

  private info(node: NodeState, state: NodeTransition, fields: Record<string, unknown>, msg: string): void {
    this.onTransition(node.name, state);
    this.logger.info({ upstream: node.name, url: node.client.shownUrl, transition: state, ...fields }, msg);
  }
}
