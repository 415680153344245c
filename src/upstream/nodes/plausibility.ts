// Is the ledger snapshot in a node's answer one that node could have sent? The
// proxy stores a latest answer "forever" under the version its headers name, and
// the watermark and the latest floor never step back, so one lying header would
// otherwise become every client's answer. A snapshot is judged against the
// node's own probes:
// - ahead: a node cannot be further ahead of its last probe than the chain can
//   advance in the time since. Beyond that bound the node is probed again, and
//   the answer stands only if the node itself now reports that far (a burst the
//   rate did not foresee).
// - behind (latest reads only): a node answers a latest read at its current
//   latest, which cannot be below a version it reported before the call was sent.
// Both allow upstreams[].spreadVersions for a url whose backends differ.
import type { LedgerInfo } from '../../ledger/info.js';
import type { NodeState, ProbeRecord } from './node-state.js';

export type Misbehaviour = 'ahead' | 'behind';

/**
 * Versions an answer may be ahead of its node's last probe whatever the rate: a
 * chain that was idle when last probed (a rate of 0) may have moved a little since.
 */
const AHEAD_SLACK_VERSIONS = 1000n;
/** The chain may advance this many times faster than the fastest rate seen lately (bursts). */
const AHEAD_RATE_FACTOR = 4;
/** Each probe without a faster advance lowers a node's remembered rate by this factor. */
const RATE_DECAY = 0.9;

export interface JudgeContext {
  /** the call is a latest read: its answer names the version its data was read at */
  latest: boolean;
  /** the node's last probe when the call was sent */
  probedAtSend: ProbeRecord | null;
  /** when the answer arrived (the node's clock) */
  receivedAt: number;
  /** the fastest advance of any node of the chain lately, in versions per second */
  versionsPerSecond: number;
  /** the probe to judge against when the node has none of its own (the most advanced node's) */
  fallback: ProbeRecord | null;
}

/**
 * 'behind' or 'ahead' when the snapshot is impossible for the node, 'unsure' when
 * it is beyond what the rate allows (ask the node again), null when plausible.
 */
export function judgeSnapshot(node: NodeState, info: LedgerInfo, how: JudgeContext): Misbehaviour | 'unsure' | null {
  const spread = BigInt(node.spreadVersions);
  const before = how.probedAtSend;
  if (
    how.latest &&
    before !== null &&
    before.info.chainId === info.chainId &&
    info.ledgerVersion + spread < before.info.ledgerVersion
  )
    return 'behind';
  const reference = node.probed ?? how.fallback;
  if (reference === null || reference.info.chainId !== info.chainId) return null;
  const seconds = Math.max(0, how.receivedAt - reference.sentAt) / 1000;
  const allowed =
    reference.info.ledgerVersion +
    AHEAD_SLACK_VERSIONS +
    spread +
    BigInt(Math.ceil(AHEAD_RATE_FACTOR * how.versionsPerSecond * seconds));
  return info.ledgerVersion > allowed ? 'unsure' : null;
}

/** Does a fresh probe of the node (sent after the answer arrived) bear out the answer's version? */
export function confirmedBy(node: NodeState, info: LedgerInfo, probe: LedgerInfo): boolean {
  return probe.chainId === info.chainId && probe.ledgerVersion + BigInt(node.spreadVersions) >= info.ledgerVersion;
}

/**
 * Learns from a probe: the node's rate of advance (the fastest lately, decaying)
 * and its probe record.
 */
export function recordProbe(node: NodeState, info: LedgerInfo, sentAt: number, answeredAt: number): void {
  const previous = node.probed;
  let rate = node.versionsPerSecond * RATE_DECAY;
  if (
    previous !== null &&
    previous.info.chainId === info.chainId &&
    info.ledgerVersion > previous.info.ledgerVersion &&
    answeredAt > previous.answeredAt
  ) {
    const measured =
      (Number(info.ledgerVersion - previous.info.ledgerVersion) * 1000) / (answeredAt - previous.answeredAt);
    if (measured > rate) rate = measured;
  }
  node.versionsPerSecond = rate;
  node.probed = { info, sentAt, answeredAt };
}

/**
 * Did the node's answers push its snapshot ahead of what it reports itself? Only
 * answers that arrived before the probe was sent count: the node had reached
 * their version by then, so its probe cannot be below it.
 */
export function pushedAhead(node: NodeState, probe: LedgerInfo, sentAt: number): boolean {
  const held = node.ledger;
  if (
    held === null ||
    node.ledgerFromAnswerAt === null ||
    node.ledgerFromAnswerAt > sentAt ||
    held.chainId !== probe.chainId
  )
    return false;
  return held.ledgerVersion > probe.ledgerVersion + BigInt(node.spreadVersions);
}
