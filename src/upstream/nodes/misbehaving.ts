// Nodes that answer implausible ledger snapshots (plausibility.ts): each offence
// is counted and logged, and a node that offends again and again is quarantined
// for a while. One offence alone does not quarantine: a node restored from an
// older snapshot, or a burst the rate did not foresee, may cause one; a node whose
// answers lie keeps offending.
import type { Logger } from 'pino';
import type { LedgerInfo } from '../../ledger/info.js';
import type { NodeState } from './node-state.js';
import type { Misbehaviour } from './plausibility.js';

/** Offences within OFFENCE_WINDOW_MS that quarantine a node. */
export const OFFENCES_TO_QUARANTINE = 3;
const OFFENCE_WINDOW_MS = 60_000;
/** How long a misbehaving node is quarantined; then it is judged afresh. */
export const MISBEHAVING_QUARANTINE_MS = 60_000;

export interface MisbehavingDeps {
  logger: Logger;
  /** told of every offence, for metrics */
  onMisbehaving?: (upstream: string, reason: Misbehaviour) => void;
}

export class MisbehavingNodes {
  private readonly offences = new WeakMap<NodeState, number[]>();

  constructor(private readonly deps: MisbehavingDeps) {}

  /**
   * One implausible snapshot from `node`: counted and logged. True when the node has
   * now offended often enough to be quarantined and is not; whether it may be (it
   * is not the last node able to take reads) is the node set's to decide.
   */
  offence(node: NodeState, reason: Misbehaviour, info: LedgerInfo): boolean {
    const now = node.clock();
    this.deps.onMisbehaving?.(node.name, reason);
    const probed = node.probed?.info.ledgerVersion;
    this.deps.logger.warn(
      {
        upstream: node.name,
        reason,
        version: String(info.ledgerVersion),
        probed: probed === undefined ? undefined : String(probed),
      },
      `upstream misbehaving: its answer's ledger version is ${reason === 'ahead' ? 'ahead of what it reports itself' : 'behind a version it already reported'}; the answer is not used`,
    );
    const recent = (this.offences.get(node) ?? []).filter((at) => now - at < OFFENCE_WINDOW_MS);
    recent.push(now);
    this.offences.set(node, recent);
    return recent.length >= OFFENCES_TO_QUARANTINE && !node.quarantined;
  }

  /** Quarantines `node` for MISBEHAVING_QUARANTINE_MS; its offences start afresh. */
  quarantine(node: NodeState): void {
    node.misbehavingUntil = node.clock() + MISBEHAVING_QUARANTINE_MS;
    this.offences.delete(node);
  }
}
