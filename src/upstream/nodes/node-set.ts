// The configured nodes, as a set: each node's snapshot (from its probes, and from
// answers judged plausible for it), the chain they are on and which of them
// count, what they say of pruning, readiness, and the reload that swaps them.
// Healthy nodes of the chain feed the watermark. A watermark an answer pushed
// ahead of what its node's next probe reports is corrected at the round's end.
import type { Logger } from 'pino';
import type { LedgerInfo } from '../../ledger/info.js';
import type { Watermark } from '../../ledger/watermark.js';
import type { NodeAnswer } from '../../model/node-answer.js';
import { type ChainIdentity, ROUNDS_TO_ADOPT } from './chain.js';
import { nodeHealth, type Prober } from './health.js';
import type { LatestFloor } from './latest-floor.js';
import type { MisbehavingNodes } from './misbehaving.js';
import { mergeNodes } from './reload.js';
import type { NodeHealth, NodeState, ProbeRecord } from './node-state.js';
import { confirmedBy, judgeSnapshot, type Misbehaviour, pushedAhead, recordProbe } from './plausibility.js';
import type { NodeTransitions } from './transitions.js';
import type { VendorIdentity } from '../../ledger/vendor.js';

/** The parts a node set keeps its knowledge in, built by wiring/pool.ts; the set connects them. */
interface NodeSetParts {
  chain: ChainIdentity;
  prober: Prober;
  transitions: NodeTransitions;
  misbehaving: MisbehavingNodes;
  /** read-your-latest */
  floor: LatestFloor;
}

export interface NodeSetDeps extends NodeSetParts {
  nodes: NodeState[];
  /** routing.maxLagVersions: a node further behind the most advanced one is lagging */
  maxLagVersions: number;
  watermark: Watermark;
  logger: Logger;
  /** told when an established chain is replaced (a devnet reset) */
  onChainChange?: (from: number, to: number) => void;
  /** the vendor the nodes must bear out (or that they name, with vendor: auto) */
  vendor: VendorIdentity;
}

/** The verdict on an answer's snapshot: null when it may be used. */
export type SnapshotVerdict = Misbehaviour | 'unconfirmed' | null;

export class NodeSet {
  /** read-your-latest: the highest version a latest reply has carried */
  readonly floor: LatestFloor;
  /** replaced whole by replaceNodes (SIGHUP reload); never mutated in place */
  private current: readonly NodeState[];
  private readonly chain: ChainIdentity;
  private readonly prober: Prober;
  private readonly transitions: NodeTransitions;
  private readonly misbehaving: MisbehavingNodes;
  /** a probe contradicted a node's earlier answers: the watermark is checked at the round's end */
  private pushed = false;
  /** why the nodes' vendor is not the proxy's (then it is not ready); null when it is */
  private vendorProblem: string | null = null;
  /** serialises replaceNodes: two reloads close together never interleave */
  private replacing: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: NodeSetDeps) {
    this.current = deps.nodes;
    this.floor = deps.floor;
    this.chain = deps.chain;
    this.prober = deps.prober;
    this.transitions = deps.transitions;
    this.misbehaving = deps.misbehaving;
    this.chain.whenChanged((from, to) => {
      // Everything learned of the old chain goes: its snapshots, and the latest floor.
      deps.watermark.reset();
      this.floor.reset();
      this.transitions.chainAdopted(from, to, ROUNDS_TO_ADOPT);
      deps.onChainChange?.(from, to);
    });
    this.prober.reportTo({
      nodes: () => this.current,
      onSnapshot: (node, info, sentAt, vendor) => {
        // What a node says of its vendor is weighed whenever it says it: the proxy is not ready while it is not the proxy's.
        deps.vendor.observe(node, vendor);
        this.vendorProblem = deps.vendor.decide(this.current);
        this.probed(node, info, sentAt);
      },
      onFailure: (node, got) => this.transitions.probeMissed(node, got),
      onRound: (answered) => this.roundDone(answered),
    });
    for (const node of this.current) this.follow(node);
  }

  get nodes(): readonly NodeState[] {
    return this.current;
  }

  /**
   * Judges the snapshot of `node`'s answer (plausibility.ts), asking the node
   * again (then asynchronously) when it is beyond what the rate allows. An offence is counted here.
   */
  judge(
    node: NodeState,
    answer: NodeAnswer,
    how: { latest: boolean; probedAtSend: ProbeRecord | null; receivedAt: number; timeoutMs: number },
  ): SnapshotVerdict | Promise<SnapshotVerdict> {
    const info = answer.ledger;
    if (info === null || info.chainId !== this.chain.current()) return null;
    // The most advanced probe of the chain: what a node with no probe of its own is judged against.
    const fallback = this.topOf((n) => n.probed);
    const { latest, probedAtSend, receivedAt, timeoutMs } = how;
    const context = { latest, probedAtSend, receivedAt, timeoutMs, versionsPerSecond: this.fastestRate(), fallback };
    const verdict = judgeSnapshot(node, info, context);
    if (verdict === 'unsure') {
      const probe = this.prober.probeWithin(node, how.receivedAt, how.timeoutMs);
      return probe.then((fresh) => this.confirmed(node, info, fresh));
    }
    if (verdict !== null) this.offence(node, verdict, info);
    return verdict;
  }

  /** An answer ahead of what the rate allows: borne out by a fresh probe of its node, or an offence. */
  private confirmed(node: NodeState, info: LedgerInfo, probe: LedgerInfo | null): SnapshotVerdict {
    if (probe === null) return 'unconfirmed';
    if (confirmedBy(node, info, probe)) return null;
    this.offence(node, 'ahead', info);
    return 'ahead';
  }

  /**
   * One implausible snapshot, counted; a node that keeps offending is quarantined,
   * unless it is the last node able to take reads: its implausible answers are
   * refused one by one anyway, and its plausible ones are all there is.
   */
  private offence(node: NodeState, reason: Misbehaviour, info: LedgerInfo): void {
    if (!this.misbehaving.offence(node, reason, info)) return;
    if (!this.current.some((n) => n !== node && this.health(n) === 'healthy')) return;
    this.misbehaving.quarantine(node);
    this.transitions.quarantine(node, this.chain.current());
  }

  /** An answer's snapshot, judged plausible: the node's, and (once it counts) the watermark's. */
  observeAnswer(node: NodeState, info: LedgerInfo): void {
    this.take(node, info, node.clock());
    this.chainUpdate();
    // This snapshot may reach a client even if the node's circuit opened while the
    // call was out: later hits must not carry an older one.
    if (!node.quarantined && info.chainId === this.chain.current()) this.deps.watermark.observe(info);
  }

  health(node: NodeState): NodeHealth {
    return nodeHealth(node, this.current, this.deps.maxLagVersions);
  }

  /** Ready: the vendor and the chain are known and some node of the chain is healthy. */
  ready(): boolean {
    return this.chainId() !== undefined && this.current.some((n) => this.health(n) === 'healthy');
  }

  /**
   * The chain the nodes front, undefined while not known, or while the nodes' vendor
   * is not known or not the proxy's (then nothing is served or cached).
   */
  chainId(): number | undefined {
    return this.vendorProblem === null && this.deps.vendor.names() !== undefined ? this.chain.current() : undefined;
  }

  /** Why the proxy is not ready: the vendor, or each node's chain or last probe failure (names, never URLs). */
  notReadyReason(): string {
    return this.vendorProblem ?? this.chain.describe(this.current);
  }

  /** `n` is below where the history of every known node of the chain starts (the `oldest` field of its snapshot). */
  belowEveryHistory(n: bigint, oldest: 'oldestLedgerVersion' | 'oldestBlockHeight'): boolean {
    for (const node of this.current) {
      if (!node.quarantined && node.ledger !== null && node.ledger[oldest] <= n) return false;
    }
    return this.current.some((node) => !node.quarantined && node.ledger !== null);
  }

  /** Probes now, then every probeIntervalMs. */
  start(): Promise<void> {
    return this.prober.start();
  }

  async close(): Promise<void> {
    this.prober.stop();
    await Promise.all(this.current.map((n) => n.client.destroy()));
  }

  /**
   * Swaps in a new node list without dropping requests: nodes kept (same name and
   * url) keep their state; removed nodes finish their calls in flight, then close.
   */
  replaceNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
    const done = this.replacing.then(() => this.swapNodes(next));
    this.replacing = done.catch(() => undefined);
    return done;
  }

  private async swapNodes(next: NodeState[]): Promise<{ added: string[]; removed: string[] }> {
    const { merged, added, removed, unused } = mergeNodes(this.current, next);
    for (const n of unused) await n.client.destroy();
    for (const n of added) this.follow(n);
    // Added nodes are probed before they take reads: until then the chain they
    // are on is unknown. The established chain stays while they are.
    const answered = await Promise.all(added.map((n) => this.prober.probe(n)));
    this.current = merged;
    this.vendorProblem = this.deps.vendor.decide(merged);
    // Nodes kept count with their last snapshot; added ones if they answered.
    this.chainUpdate(
      new Set(merged.filter((n) => (!added.includes(n) ? n.ledger !== null : answered[added.indexOf(n)] !== null))),
    );
    // close() lets requests in flight finish before the connections go.
    await Promise.all(removed.map((n) => n.client.close()));
    return { added: added.map((n) => n.name), removed: removed.map((n) => n.name) };
  }

  private follow(node: NodeState): void {
    node.onCircuitChange((open) => this.transitions.circuit(node, open));
    node.onSheddingChange((shedding, backOffMs) => this.transitions.shedding(node, shedding, backOffMs));
  }

  /** Keeps `info` as the node's snapshot when it is newer, or of another chain. */
  private take(node: NodeState, info: LedgerInfo, fromAnswerAt: number | null): void {
    const held = node.ledger;
    if (held === null || info.ledgerVersion >= held.ledgerVersion || info.chainId !== held.chainId) {
      node.ledger = info;
      node.ledgerFromAnswerAt = fromAnswerAt;
    }
  }

  /** A probe answered: its rate and record, and the snapshot, unless the node's answers said more than it does. */
  private probed(node: NodeState, info: LedgerInfo, sentAt: number): void {
    recordProbe(node, info, sentAt, node.clock());
    if (pushedAhead(node, info, sentAt)) {
      this.offence(node, 'ahead', node.ledger!);
      node.ledger = info;
      node.ledgerFromAnswerAt = null;
      this.pushed = true;
    } else {
      this.take(node, info, null);
    }
    this.transitions.probeAnswered(node);
    this.chainUpdate();
  }

  private roundDone(answered: ReadonlySet<NodeState>): void {
    this.chainUpdate(answered);
    if (this.pushed) this.correctWatermark();
    for (const node of this.current) this.transitions.lag(node, this.health(node));
  }

  /** Re-decides the chain and the quarantine, then feeds the watermark from the nodes that count. */
  private chainUpdate(answeredRound?: ReadonlySet<NodeState>): void {
    this.chain.update(this.current, answeredRound);
    const expected = this.chain.current();
    for (const node of this.current) this.transitions.quarantine(node, expected);
    if (expected === undefined) return;
    const { watermark } = this.deps;
    // A snapshot of another chain (taken before the chain was known) is dropped.
    if (watermark.current() !== null && watermark.current()!.chainId !== expected) watermark.reset();
    // Every healthy node of the chain: snapshots seen before the chain was known count too.
    for (const n of this.current) {
      if (n.ledger !== null && !n.quarantined && this.health(n) === 'healthy') watermark.observe(n.ledger);
    }
  }

  /** The watermark and the floor, brought back to the freshest snapshot the nodes bear out. */
  private correctWatermark(): void {
    this.pushed = false;
    const top = this.topOf((n) => n.ledger);
    if (top === null) return;
    this.floor.clamp(top.ledgerVersion);
    const held = this.deps.watermark.current();
    if (held === null || held.ledgerVersion <= top.ledgerVersion) return;
    this.deps.watermark.correct(top);
    this.deps.logger.warn(
      { from: String(held.ledgerVersion), to: String(top.ledgerVersion) },
      "watermark corrected: a node's answers had pushed it ahead of what the nodes report",
    );
  }

  /** Of the nodes of the chain not quarantined, the most advanced `pick` of each. */
  private topOf<T extends LedgerInfo | ProbeRecord>(pick: (n: NodeState) => T | null): T | null {
    const expected = this.chain.current();
    const version = (t: T): bigint => ('info' in t ? t.info.ledgerVersion : t.ledgerVersion);
    let top: T | null = null;
    for (const n of this.current) {
      const t = pick(n);
      if (t === null || n.quarantined || ('info' in t ? t.info.chainId : t.chainId) !== expected) continue;
      if (top === null || version(t) > version(top)) top = t;
    }
    return top;
  }

  /** The fastest advance of any node of the chain lately. */
  private fastestRate(): number {
    let rate = 0;
    for (const n of this.current) if (!n.otherChain && n.versionsPerSecond > rate) rate = n.versionsPerSecond;
    return rate;
  }
}
