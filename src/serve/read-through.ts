// The read path of every cached route (DESIGN "Data flow"): a pinned read
// (pinned.ts: at N, or a transaction or block by its path) or a latest read
// (latest.ts), both on the chain the nodes are on. The tiers they share are in
// tiers.ts; the cross-instance fill of a pinned miss in fill.ts; the second
// node's word before an answer is stored (cache.verify) in verify.ts. The parts
// are built by wiring/read-path.ts.
import { NodeError } from '../errors.js';
import type { Watermark } from '../ledger/watermark.js';
import type { ReadRequest } from '../model/read.js';
import type { ReadContext } from '../model/read-context.js';
import type { ReadResult } from '../model/read-result.js';
import type { LatestReads } from './latest.js';
import type { PinnedReads } from './pinned.js';
import type { NodeReader } from './ports.js';
import type { CachePurge } from './purge.js';

export interface ReadThroughParts {
  nodes: NodeReader;
  watermark: Watermark;
  pinned: PinnedReads;
  latest: LatestReads;
  /** purges of this process's tiers, and of Redis when ordered */
  purge: CachePurge;
}

export class ReadThrough {
  private readonly nodes: NodeReader;
  private readonly watermark: Watermark;
  private readonly pinned: PinnedReads;
  private readonly latest: LatestReads;
  /** purges of this process's tiers, and of Redis when ordered */
  readonly purge: CachePurge;

  constructor(parts: ReadThroughParts) {
    this.nodes = parts.nodes;
    this.watermark = parts.watermark;
    this.pinned = parts.pinned;
    this.latest = parts.latest;
    this.purge = parts.purge;
  }

  /**
   * Synchronous on a memory hit. Throws (or rejects with) the NodeError to answer
   * with. `context`: whom the read is for (a node call it makes carries it, and
   * may be refused by it); a hit, or a read that joins another's node call, never is.
   */
  read(req: ReadRequest, context?: ReadContext): Promise<ReadResult> | ReadResult {
    const chain = this.chain();
    if (req.refusedAtLedger !== undefined) throw this.refusedAtLedger(req, req.refusedAtLedger);
    return req.version === null && req.route.pin === 'version'
      ? this.latest.read(req, chain, context)
      : this.pinned.read(req, chain, context);
  }

  /**
   * Input a node refuses once it has read its ledger (a BCS view body that does
   * not decode): what the node answers, without asking one. Its version checks
   * come first: 410 below every node's history, 404 beyond the newest version
   * the proxy knows a node has.
   */
  private refusedAtLedger(req: ReadRequest, message: string): NodeError {
    const at = req.version;
    if (at !== null && this.nodes.isPruned(at)) return NodeError.pruned(at);
    const latest = this.watermark.current();
    if (at !== null && latest !== null && at > latest.ledgerVersion)
      return NodeError.versionNotFound(at, latest.ledgerVersion);
    return NodeError.refusedAtLedger(message);
  }

  /** The chain to key entries under; a read while it is not known is refused. */
  private chain(): number {
    const chain = this.nodes.chainId();
    if (chain === undefined) {
      throw NodeError.notReady(this.nodes.notReadyReason?.() ?? 'the chain the nodes are on is not known yet');
    }
    return chain;
  }
}
