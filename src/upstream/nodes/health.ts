// Node health: GET /v1 on every node every probeIntervalMs, what each probe got
// against what it expected, and what a node's state is called (healthy,
// lagging, down, quarantined) for routing, /readyz and the metrics.
import type { Logger } from 'pino';
import { parseLedgerInfoJson, type LedgerInfo } from '../../ledger/info.js';
import { asError } from '../../process/log-error.js';
import { mediaType } from '../../wire/media-type.js';
import { settlesWithin } from '../../timing/settles-within.js';
import type { ProbeReply } from '../transport/node-client.js';
import { CountedFailure, type NodeHealth, type NodeState } from './node-state.js';
import { NodeShedding, shedBackOffMs } from './shedding.js';

/** What a probe expects of a node. */
export const PROBE_EXPECTED = 'HTTP 200 application/json with the ledger info';

/** A node's last probe, as /readyz shows it: it got the ledger info, or what it got instead. */
export type ProbeResult = { ok: true } | { ok: false; got: string; expected: string };

/** When probe rounds run: a timer in production; a test may run each round itself. */
export interface ProbeSchedule {
  /** Runs `round` every `ms` until the returned stop is called. */
  every(ms: number, round: () => Promise<void>): () => void;
}

const TIMER_SCHEDULE: ProbeSchedule = {
  every(ms, round) {
    const timer = setInterval(() => void round(), ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface ProberSettings {
  intervalMs: number;
  timeoutMs: number;
  logger: Logger;
  schedule?: ProbeSchedule;
}

/** Where a prober's probes report: the node set it serves. */
export interface ProbeReports {
  /** the current node list (a reload replaces it) */
  nodes(): readonly NodeState[];
  /** a node answered with its snapshot, to a probe sent at `sentAt` (the node's clock), in `vendor`'s headers (null: none) */
  onSnapshot(node: NodeState, info: LedgerInfo, sentAt: number, vendor: string | null): void;
  /** a node's probe got no ledger info (`got`: what it got instead, in the proxy's words) */
  onFailure(node: NodeState, got: string): void;
  /** a whole round is done: these nodes answered it */
  onRound(answered: ReadonlySet<NodeState>): void;
}

export class Prober {
  private stopSchedule: (() => void) | null = null;
  /** the probe in flight per node, and when it was sent: a probe wanted meanwhile joins it */
  private readonly inFlight = new Map<NodeState, { sentAt: number; answer: Promise<LedgerInfo | null> }>();
  private reports: ProbeReports | null = null;

  constructor(private readonly deps: ProberSettings) {}

  /** Where every probe reports: set once, by the node set the prober serves, before its first probe. */
  reportTo(reports: ProbeReports): void {
    this.reports = reports;
  }

  private get to(): ProbeReports {
    if (this.reports === null) throw new Error('Prober: probed before reportTo()');
    return this.reports;
  }

  /** Probes now, then every intervalMs. */
  start(): Promise<void> {
    this.stopSchedule = (this.deps.schedule ?? TIMER_SCHEDULE).every(this.deps.intervalMs, () => this.round());
    return this.round();
  }

  stop(): void {
    this.stopSchedule?.();
    this.stopSchedule = null;
  }

  /** One round: every node probed (a probe still in flight is joined), then onRound. */
  private async round(): Promise<void> {
    const nodes = this.to.nodes();
    const results = await Promise.all(nodes.map((node) => this.probe(node)));
    this.to.onRound(new Set(nodes.filter((_, i) => results[i] !== null)));
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

  /** As probe(), but null when no answer comes within `ms`. */
  probeWithin(node: NodeState, since: number, ms: number): Promise<LedgerInfo | null> {
    return settlesWithin(this.probe(node, since), ms, null);
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
      const answer = await node.client.probe(this.deps.timeoutMs);
      // What it got instead rides on the failure: the breaker counts it, the catch below says it.
      if ('failed' in answer) {
        if (answer.cause !== undefined)
          this.deps.logger.debug(
            { upstream: node.name, url: node.client.shownUrl, err: asError(answer.cause) },
            'probe failed in a way the proxy does not name',
          );
        throw new CountedFailure(answer.failed);
      }
      // GET /v1 is not exempt from a node's load shedding: no answer, and no failure.
      if (shedsLoad(answer)) throw new NodeShedding(answer.retryAfterMs);
      const info = ledgerInfoOf(answer);
      if (typeof info === 'string') throw new CountedFailure(info);
      vendor = answer.vendor;
      return info;
    };
    try {
      const info = circuit === 'half-open' ? await node.guard(get) : await get();
      node.probeMiss = null;
      node.admitted(sentAt);
      this.to.onSnapshot(node, info, sentAt, vendor);
      return info;
    } catch (err) {
      if (err instanceof NodeShedding) {
        node.probeMiss = SHEDDING_GOT;
        node.shed(shedBackOffMs(err.retryAfterMs, this.deps.intervalMs));
        return null;
      }
      const cause = err instanceof CountedFailure ? err.cause : err;
      // Anything but what the probe got (a trial another call took meanwhile) is named, not quoted.
      const got = typeof cause === 'string' ? cause : 'no answer: the probe could not be sent';
      node.probeMiss = got;
      if (circuit === 'closed' && err instanceof CountedFailure) await node.recordFailure();
      this.deps.logger.debug({ upstream: node.name, url: node.client.shownUrl, got }, 'probe failed');
      this.to.onFailure(node, got);
      return null;
    }
  }
}

/** A node's last probe, for /readyz; undefined before its first. */
export function probeResult(node: NodeState): ProbeResult | undefined {
  if (node.probeMiss !== null) return { ok: false, got: node.probeMiss, expected: PROBE_EXPECTED };
  return node.probed !== null ? { ok: true } : undefined;
}

/** The ledger info of a probe's answer, or what it got instead: its status, its content type, and why that is not one. */
function ledgerInfoOf(answer: ProbeReply): LedgerInfo | string {
  const type = mediaType(answer.contentType);
  const got = `HTTP ${answer.status} ${type || 'without a content type'}`;
  const json = type === 'application/json' ? parsedJson(answer.body) : undefined;
  if (answer.status !== 200) {
    const code = (json as { error_code?: unknown } | null | undefined)?.error_code;
    return typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? `${got} (${code})` : got;
  }
  if (type !== 'application/json') return got;
  if (json === undefined) return `${got} that is not JSON`;
  return parseLedgerInfoJson(json) ?? `${got} that is not a ledger info`;
}

/** What a probe got from a node shedding load, as /readyz and the log say it. */
const SHEDDING_GOT = 'HTTP 503 application/json (overloaded)';

/** The probe's answer is the node's load shedding (503 `overloaded`), which says "not now", not "broken". */
function shedsLoad(answer: ProbeReply): boolean {
  if (answer.status !== 503 || mediaType(answer.contentType) !== 'application/json') return false;
  return (parsedJson(answer.body) as { error_code?: unknown } | null | undefined)?.error_code === 'overloaded';
}

/** The body as JSON; undefined when it is not. */
function parsedJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The most advanced version among nodes that are not quarantined. */
function mostAdvanced(nodes: readonly NodeState[]): bigint | null {
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
