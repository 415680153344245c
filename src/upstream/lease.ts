// Node choice: the node a call goes to (select.ts), taken as a lease on one slot
// of its budget (one call in flight, one rate token), given back by the lease's
// release. A node out of budget may be replaced by an equivalent one; otherwise
// the call waits for a slot (woken when a lease is released or a token is due)
// within its wait, then reports the budget exhausted.
import type { Priority } from '../config/index.js';
import type { EveryField } from '../model/read.js';
import { BudgetWaits, budgetShare, type ShedFirst } from './budgets.js';
import type { NodeState } from './nodes/node-state.js';
import { type ChooseOptions, chooseNode } from './select.js';

/** One slot of one node's budget, held for one call. */
export interface Lease {
  readonly node: NodeState;
  /** Gives the slot back and wakes the calls waiting for one; only the first call counts. */
  release(): void;
}

export type LeaseChoice =
  | { kind: 'lease'; lease: Lease }
  | { kind: 'pruned' }
  | { kind: 'none' }
  | { kind: 'exhausted'; node: NodeState };

export interface LeaseDeps {
  /** the current node list */
  nodes(): readonly NodeState[];
  /** routing.maxLagVersions */
  maxLag: number;
  /** read-your-latest: the highest version reported for a latest read so far */
  floor(): bigint | null;
  /** shedding.shedFirst: the class of reads that may use only part of a node's maxInFlight */
  shedFirst: ShedFirst;
}

export class NodeLeases {
  private readonly waits = new BudgetWaits();

  constructor(private readonly deps: LeaseDeps) {}

  /** How many calls are waiting for a budget now. */
  get waiting(): number {
    return this.waits.waiting;
  }

  /**
   * A lease on the node for a call pinned at `version` (null: latest) that has not
   * been to `tried` yet, waiting up to waitMs for a budget. `priority`: the
   * tenant's, which decides how much of a budget the call may use. Settled at
   * once (not a promise) when the call need not wait: most calls.
   */
  take(
    version: bigint | null,
    tried: ReadonlySet<NodeState>,
    waitMs: number,
    priority?: Priority,
  ): LeaseChoice | Promise<LeaseChoice> {
    const share = budgetShare(this.deps.shedFirst, { latest: version === null, priority });
    const wanted = { version, tried, maxLag: this.deps.maxLag, floor: this.deps.floor() };
    const choice = this.choose(wanted, share);
    if (choice.kind !== 'wait') return choice;
    return this.waitFor(wanted, share, choice.node, Date.now() + waitMs);
  }

  /** Waits for a budget until `until` (epoch ms), looking again at each wake-up. */
  private async waitFor(wanted: ChooseOptions, share: number, first: NodeState, until: number): Promise<LeaseChoice> {
    let node = first;
    for (;;) {
      const left = until - Date.now();
      if (left <= 0) return { kind: 'exhausted', node };
      await this.waits.next(node, left);
      wanted.floor = this.deps.floor();
      const choice = this.choose(wanted, share);
      if (choice.kind !== 'wait') return choice;
      node = choice.node;
    }
  }

  /** The lease, or why there is none, or the node whose budget to wait for. */
  private choose(wanted: ChooseOptions, share: number): LeaseChoice | { kind: 'wait'; node: NodeState } {
    const nodes = this.deps.nodes();
    const choice = chooseNode(nodes, wanted);
    if (choice.kind !== 'node') return choice;
    // The slot is taken at once, in the same tick as the check: calls woken
    // together cannot all pass the check before any of them holds a slot.
    if (choice.node.hasBudget(share)) return { kind: 'lease', lease: this.lease(choice.node) };
    const { version } = wanted;
    // `wanted` with only the budget's test: a literal of every field, not a spread (model/read.ts, EveryField, says why).
    const budgeted: EveryField<ChooseOptions> = {
      version,
      tried: wanted.tried,
      maxLag: wanted.maxLag,
      floor: wanted.floor,
      usable: (n) => n.hasBudget(share),
      atOrAboveFloor: wanted.atOrAboveFloor,
    };
    const alt = chooseNode(nodes, budgeted);
    if (alt.kind === 'node' && (version === null || alt.node.covers(version) === choice.node.covers(version)))
      return { kind: 'lease', lease: this.lease(alt.node) };
    return { kind: 'wait', node: choice.node };
  }

  /** A second node for a latest read's hedge: never below the floor, never waiting for a budget. */
  takeHedge(tried: ReadonlySet<NodeState>, priority?: Priority): Lease | null {
    const share = budgetShare(this.deps.shedFirst, { latest: true, priority });
    const choice = chooseNode(this.deps.nodes(), {
      version: null,
      tried,
      maxLag: this.deps.maxLag,
      floor: this.deps.floor(),
      atOrAboveFloor: true,
      usable: (n) => n.hasBudget(share),
    });
    return choice.kind === 'node' ? this.lease(choice.node) : null;
  }

  private lease(node: NodeState): Lease {
    node.inFlight++;
    node.spend();
    let held = true;
    return {
      node,
      release: () => {
        if (!held) return;
        held = false;
        node.inFlight--;
        this.waits.wake();
      },
    };
  }
}
