// Fault injection: one active fault at a time, limited to some routes and/or to
// the next `count` matching requests. The server decides what each mode does;
// the hostile modes (a node that answers, but not as a node should) are in hostile.ts,
// the transaction feed's (pages a follower must not take) in feed/fault.ts and feed/page.ts.
import { isFeedMode, SIM_FEED_MODES, type SimFeedFault, type SimFeedMode } from './feed/fault.js';
import type { SimRoute } from './routes.js';

export { isFeedMode, SIM_FEED_MODES };

/**
 * overloaded: a node shedding load (aptos-core's memory admission gate): 503
 * `overloaded` as plain JSON, no ledger headers, on every path but `/-/healthy`.
 */
export type SimFaultMode =
  | 'hang'
  | 'slow'
  | 'html'
  | 'reset'
  | 'status500'
  | 'status429'
  | 'empty'
  | 'overloaded'
  | SimHostileMode
  | SimFeedMode;

/**
 * A node that answers, but with something a proxy must not take as it comes:
 * gzipBomb: the answer's headers with a gzip body of `bytes` zeros (default 1 GiB decoded, about 1 MiB sent);
 * hugeBody: the answer's headers with `bytes` of body, not compressed (default 200 MB);
 * headerAhead: the answer with its ledger version header `versions` ahead (default: u64 max);
 * headerBehind: the answer with its seven ledger headers those of `versions` (default 1000) before the data;
 * wrongBody: the answer with other data, its status and headers unchanged: a JSON body's first digit
 * changed (a space added when it has none), another body's last byte;
 * endlessBody: the answer's headers and body, chunked, then `bytes` of spaces (default 1 KiB) every
 * 10 ms, never ending, until the client leaves.
 */
export type SimHostileMode = 'gzipBomb' | 'hugeBody' | 'headerAhead' | 'headerBehind' | 'wrongBody' | 'endlessBody';

export interface SimFault extends Omit<SimFeedFault, 'mode'> {
  mode: SimFaultMode;
  /**
   * 'slow': how long to wait before answering normally (default 1000 ms); any
   * other mode but 'hang': how long to wait before the fault (default 0)
   */
  delayMs?: number;
  /** only these routes are faulted (default: all) */
  routes?: SimRoute[];
  /** only the next N matching requests are faulted (default: all until clear()) */
  count?: number;
  /** gzipBomb: decoded size; hugeBody: body size; endlessBody: bytes per piece */
  bytes?: number;
  /** headerAhead, headerBehind: how many versions the ledger headers are off; feedLag: how far the node is behind */
  versions?: bigint;
  /** overloaded: a Retry-After to send, in seconds (a node's gate sends none) */
  retryAfterSeconds?: number;
}

export interface SimFaults {
  set(fault: SimFault): void;
  clear(): void;
}

/** Every mode, in the order the sim CLI's --help lists them. */
export const SIM_FAULT_MODES: readonly SimFaultMode[] = [
  'hang',
  'slow',
  'html',
  'reset',
  'status500',
  'status429',
  'empty',
  'overloaded',
  'gzipBomb',
  'hugeBody',
  'headerAhead',
  'headerBehind',
  'wrongBody',
  'endlessBody',
  ...SIM_FEED_MODES,
];

/** The path a node's load shedding lets through: its health check, so liveness probes still pass. */
const SHEDDING_EXEMPT = /\/-\/healthy$/;

export const SIM_DEFAULT_SLOW_MS = 1000;

export class SimFaultInjector implements SimFaults {
  #active: (SimFault & { remaining: number }) | null = null;

  set(fault: SimFault): void {
    if (!SIM_FAULT_MODES.includes(fault.mode)) throw new RangeError(`unknown fault mode: ${String(fault.mode)}`);
    if (fault.count !== undefined && !(Number.isInteger(fault.count) && fault.count > 0)) {
      throw new RangeError(`fault count must be a positive integer: ${fault.count}`);
    }
    if (fault.delayMs !== undefined && !(fault.delayMs >= 0))
      throw new RangeError(`delayMs must be >= 0: ${fault.delayMs}`);
    if (fault.bytes !== undefined && !(Number.isSafeInteger(fault.bytes) && fault.bytes >= 0))
      throw new RangeError(`bytes must be a whole number >= 0: ${fault.bytes}`);
    if (fault.versions !== undefined && fault.versions < 0n)
      throw new RangeError(`versions must be >= 0: ${fault.versions}`);
    if (
      fault.retryAfterSeconds !== undefined &&
      !(Number.isSafeInteger(fault.retryAfterSeconds) && fault.retryAfterSeconds >= 0)
    ) {
      throw new RangeError(`retryAfterSeconds must be a whole number >= 0: ${fault.retryAfterSeconds}`);
    }
    if (fault.range !== undefined && fault.range.from > fault.range.to)
      throw new RangeError(`range.from must be <= range.to: ${fault.range.from} > ${fault.range.to}`);
    this.#active = { ...fault, routes: fault.routes && [...fault.routes], remaining: fault.count ?? Infinity };
  }

  clear(): void {
    this.#active = null;
  }

  /** The fault for this request (`path`: without the query), if any; consumes one of `count`. */
  take(route: SimRoute, path = ''): SimFault | null {
    const fault = this.#active;
    if (fault === null || (fault.routes !== undefined && !fault.routes.includes(route))) return null;
    if (isFeedMode(fault.mode) && route !== 'feed') return null;
    if (fault.mode === 'overloaded' && SHEDDING_EXEMPT.test(path)) return null;
    fault.remaining--;
    if (fault.remaining <= 0) this.#active = null;
    return fault;
  }
}
