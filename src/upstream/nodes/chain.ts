// Chain identity (api.md §8): which chain the proxy fronts, decided before anything
// is served or cached. The configured chainId, else the chain a strict majority
// of the nodes that answered reports (a node that never answered has no vote).
// Without a strict majority the chain is unknown and the proxy is not ready. A
// node on another chain is quarantined: no reads, no passthrough, no say in the
// watermark. Without a configured chainId, a change reported by every answering
// node for two probe rounds in a row (a devnet reset) is adopted, with a warning.
import type { Logger } from 'pino';
import type { NodeState } from './node-state.js';

/** Probe rounds in a row in which every answering node must report the new chain before it is adopted. */
export const ROUNDS_TO_ADOPT = 2;

export class ChainIdentity {
  private established: number | undefined;
  /** the unanimous new chain seen in the last probe rounds, and in how many rounds in a row */
  private candidate: { chainId: number; rounds: number } | null = null;
  /** what was last logged about a disagreement, so it is logged once per state */
  private lastDisagreement = '';

  /** told when an established chain is replaced (a devnet reset); it logs the change */
  private onChange: (from: number, to: number) => void = () => undefined;

  constructor(
    private readonly configured: number | undefined,
    private readonly logger: Logger,
  ) {
    this.established = configured;
  }

  /** Who is told when an established chain is replaced: the node set that holds this identity. */
  whenChanged(listener: (from: number, to: number) => void): void {
    this.onChange = listener;
  }

  /** The chain the proxy fronts; undefined while it is not known. */
  current(): number | undefined {
    return this.established;
  }

  /**
   * Marks each node on another chain or not. After a probe round (`answered`: the
   * nodes that answered it), also decides the chain: established from a strict
   * majority of those, or changed when all of them report another one for
   * ROUNDS_TO_ADOPT rounds in a row. Single answers between rounds never decide:
   * a minority node that answers first cannot set the chain.
   */
  update(nodes: readonly NodeState[], answered?: ReadonlySet<NodeState>): void {
    if (answered !== undefined && this.configured === undefined) {
      const votes = tally(nodes.filter((n) => answered.has(n)));
      if (this.established === undefined) this.establish(nodes, votes);
      else this.followChange(votes);
    }
    for (const node of nodes) this.mark(node);
  }

  /** Why there is no chain: each node's chain or failure, by name (never a URL). */
  describe(nodes: readonly NodeState[]): string {
    const parts = nodes.map(
      (n) => `${n.name}: ${n.ledger !== null ? `chain ${n.ledger.chainId}` : (n.probeMiss ?? 'no answer yet')}`,
    );
    return `the nodes do not agree on one chain, or have not answered (${parts.join('; ')})`;
  }

  private establish(nodes: readonly NodeState[], votes: Map<number, number>): void {
    const voters = [...votes.values()].reduce((a, b) => a + b, 0);
    for (const [chainId, count] of votes) {
      if (count * 2 > voters) {
        this.established = chainId;
        this.lastDisagreement = '';
        this.logger.info({ chainId, voters }, 'chain established: a strict majority of the answering nodes reports it');
        return;
      }
    }
    if (votes.size > 1) {
      const byNode = nodes
        .filter((n) => n.ledger !== null)
        .map((n) => ({ upstream: n.name, chainId: n.ledger!.chainId }));
      const key = JSON.stringify(byNode);
      if (key !== this.lastDisagreement) {
        this.lastDisagreement = key;
        this.logger.error(
          { nodes: byNode },
          'NOT READY: the nodes disagree on the chain and no chain has a strict majority; set chainId or fix the nodes',
        );
      }
    }
  }

  private followChange(votes: Map<number, number>): void {
    const [only] = votes.keys();
    const unanimousOther = votes.size === 1 && only !== this.established;
    if (!unanimousOther) {
      this.candidate = null;
      return;
    }
    this.candidate =
      this.candidate?.chainId === only
        ? { chainId: only, rounds: this.candidate.rounds + 1 }
        : { chainId: only, rounds: 1 };
    if (this.candidate.rounds < ROUNDS_TO_ADOPT) return;
    const from = this.established!;
    this.established = only;
    this.candidate = null;
    this.onChange(from, only);
  }

  /** On another chain than the established one: quarantined (node-set logs the change once). */
  private mark(node: NodeState): void {
    node.otherChain =
      this.established !== undefined && node.ledger !== null && node.ledger.chainId !== this.established;
  }
}

/** Chain id → how many nodes that answered report it. */
function tally(nodes: readonly NodeState[]): Map<number, number> {
  const votes = new Map<number, number>();
  for (const n of nodes) if (n.ledger !== null) votes.set(n.ledger.chainId, (votes.get(n.ledger.chainId) ?? 0) + 1);
  return votes;
}
