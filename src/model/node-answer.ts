// What one node said, after the transport: the bytes to replay, and what it told
// us about its ledger.
import type { Readable } from 'node:stream';
import type { LedgerInfo } from '../ledger/info.js';
import type { ReplayedAnswer } from './read.js';

export interface NodeAnswer extends ReplayedAnswer {
  /** the node's name (config) */
  upstream: string;
  /** the snapshot in the answer's ledger headers, when it had all seven */
  ledger: LedgerInfo | null;
  /** the error_code of a JSON error body */
  errorCode?: string;
  /** the vm_error_code of a JSON error body */
  vmErrorCode?: number | null;
  /** an error answer's Retry-After, in ms from when it arrived (delta seconds or an HTTP date) */
  retryAfterMs?: number;
  /**
   * The body parsed, for a 200 JSON answer of a read: parsed once, to check it, and
   * read by the cache policy instead of parsing it again (a block can be megabytes).
   * Never stored.
   */
  json?: unknown;
  /** every header the node sent, kept for passthrough calls only */
  headers?: Record<string, string | string[] | undefined>;
  /** a passthrough success's body as it arrives (then `body` is empty): streamed on to the client, never held */
  stream?: Readable;
}
