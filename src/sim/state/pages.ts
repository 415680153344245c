// Pagination of /resources and /modules as a node does it (api.md §9):
// `limit` a u16 (0 → 400 invalid_input, absent or above the maximum → the
// maximum), `start` an opaque cursor the node handed out, and the next page's
// cursor in the X-…-CURSOR header while more follows.
import { SimError } from '../node-error.js';
import { simAddressBytes } from '../parse/address.js';
import { simHash } from './tables.js';

export const SIM_MAX_PAGE_SIZE = 9999;
// Rust's u16::from_str: digits with an optional leading '+', leading zeros of any length.
const U16 = /^\+?[0-9]+$/;

/** ?limit: null when absent; not a u16 → 400 without ledger headers (the query does not parse). */
export function pageLimit(query: URLSearchParams): number | null {
  const text = query.get('limit');
  if (text === null) return null;
  const value = U16.test(text) ? Number(text) : NaN;
  if (!(value <= 0xffff))
    throw SimError.badRequest(`failed to parse query parameter \`limit\`: not a u16: ${JSON.stringify(text)}`);
  return value;
}

/**
 * A cursor: 0x, 4 bytes tying it to the account and list, then the index of the
 * next entry (u32 BE). Opaque to clients, as a node's BCS StateKey is.
 */
function cursorOf(address: string, list: string, index: number): string {
  const tag = simHash(Buffer.from(list), simAddressBytes(address)).subarray(0, 4);
  const at = Buffer.alloc(4);
  at.writeUInt32BE(index);
  return '0x' + Buffer.concat([tag, at]).toString('hex');
}

/** The page of `entries` a request asks for, and the next page's cursor (after the ledger is read). */
export function pageOf<T>(
  entries: T[],
  address: string,
  list: string,
  start: string | null,
  limit: number | null,
  maxPageSize = SIM_MAX_PAGE_SIZE,
): { page: T[]; cursor?: string } {
  if (limit === 0) throw new SimError(400, 'invalid_input', 'Given limit value (0) must not be zero');
  const size = limit === null || limit > maxPageSize ? maxPageSize : limit;
  let from = 0;
  if (start !== null) {
    const match = /^0x([0-9a-f]{8})([0-9a-f]{8})$/.exec(start);
    if (match === null || cursorOf(address, list, 0).slice(2, 10) !== match[1]) {
      throw new SimError(400, 'invalid_input', `Invalid start: not a cursor of this list: ${JSON.stringify(start)}`);
    }
    from = parseInt(match[2], 16);
  }
  const page = entries.slice(from, from + size);
  return from + size < entries.length ? { page, cursor: cursorOf(address, list, from + size) } : { page };
}
