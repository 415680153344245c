// The parameters the cached routes share, parsed as a node parses them and put in
// canonical form (api.md §9): a refused value is the 400 a node would
// answer, without ledger headers (it never got as far as its ledger).
import { NodeError } from '../errors.js';
import { acceptFormat, type AnswerFormat } from '../wire/accept.js';
import { parseAddress } from '../wire/address.js';
import { isIdentifier } from '../wire/function-id.js';
import { mediaType } from '../wire/media-type.js';
import { formatTypeTag, parseTypeTag } from '../wire/move-type.js';
import { parseU64 } from '../wire/u64.js';
import type { RawRead } from './route.js';

export const JSON_TYPE = 'application/json';
export const BCS_TYPE = 'application/x-bcs';

/** One query parameter: absent → undefined; given twice → 400 (a node's query extractor refuses duplicates). */
function queryValue(raw: RawRead, name: string): string | undefined {
  const value = raw.query[name];
  if (Array.isArray(value))
    throw NodeError.badRequest(`failed to parse query parameter "${name}": given more than once`);
  return value;
}

/** ?ledger_version: absent → null (latest), else a u64, else 400. */
export function ledgerVersion(raw: RawRead): bigint | null {
  const text = queryValue(raw, 'ledger_version');
  if (text === undefined) return null;
  const version = parseU64(text);
  if (version === null) {
    throw NodeError.badRequest(
      `failed to parse "ledger_version": ${JSON.stringify(text)} is not a valid u64 (a decimal string of digits)`,
    );
  }
  return version;
}

/** An account address or table handle in its canonical long form. */
export function addressParam(raw: RawRead, name: string): string {
  const text = raw.params[name] ?? '';
  const address = parseAddress(text);
  if (address === null) {
    throw NodeError.badRequest(
      `failed to parse path "${name}": ${JSON.stringify(text)} is not a valid address (0x then 1 to 64 hex digits)`,
    );
  }
  return address;
}

/** A u64 path parameter (a version, a block height), as a number without leading zeros. */
export function u64Param(raw: RawRead, name: string): bigint {
  const text = raw.params[name] ?? '';
  const value = parseU64(text);
  if (value === null)
    throw NodeError.badRequest(`failed to parse path "${name}": ${JSON.stringify(text)} is not a valid u64`);
  return value;
}

const HASH = /^(?:0x)?([0-9a-fA-F]{64})$/;

/** A transaction hash: 0x + 64 lower-case hex digits. */
export function hashParam(raw: RawRead, name: string): string {
  const text = raw.params[name] ?? '';
  const match = HASH.exec(text);
  if (match === null)
    throw NodeError.badRequest(`failed to parse path "${name}": ${JSON.stringify(text)} is not a 32-byte hash in hex`);
  return '0x' + match[1].toLowerCase();
}

/** A Move identifier (a module name). */
export function identifierParam(raw: RawRead, name: string): string {
  const text = raw.params[name] ?? '';
  if (!isIdentifier(text))
    throw NodeError.badRequest(`failed to parse path "${name}": ${JSON.stringify(text)} is not a Move identifier`);
  return text;
}

/** A struct tag in its canonical form: long addresses, no spaces. */
export function structTagParam(raw: RawRead, name: string): string {
  const text = raw.params[name] ?? '';
  const tag = parseTypeTag(text);
  if (tag === null || tag.kind !== 'struct') {
    throw NodeError.badRequest(`failed to parse path "${name}": ${JSON.stringify(text)} is not a Move struct tag`);
  }
  return formatTypeTag(tag);
}

/** A coin type (struct tag) or a fungible asset's metadata address. */
export function assetParam(raw: RawRead, name: string): string {
  const text = raw.params[name] ?? '';
  const address = parseAddress(text);
  if (address !== null) return address;
  return structTagParam(raw, name);
}

// Rust's u16::from_str: digits with an optional leading '+', leading zeros of any length.
const U16 = /^\+?[0-9]+$/;

/** ?limit, as the node reads it (a u16); it stays in the key as sent, since pages depend on the node's maximum. */
export function limitParam(raw: RawRead): string | undefined {
  const text = queryValue(raw, 'limit');
  if (text === undefined) return undefined;
  const value = U16.test(text) ? Number(text) : NaN;
  if (!(value <= 0xffff))
    throw NodeError.badRequest(`failed to parse query parameter "limit": ${JSON.stringify(text)} is not a u16`);
  return String(value);
}

/** ?start: an opaque cursor a node handed out; a node judges it, the key keeps it as sent. */
export function startParam(raw: RawRead): string | undefined {
  return queryValue(raw, 'start');
}

/** ?with_transactions: Rust's bool::from_str; false is the default, so it is dropped. */
export function withTransactionsParam(raw: RawRead): boolean {
  const text = queryValue(raw, 'with_transactions');
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  throw NodeError.badRequest(
    `failed to parse query parameter "with_transactions": ${JSON.stringify(text)} is not true or false`,
  );
}

/** A route whose body is JSON: any other content type is refused, as a node's JSON extractor does. */
export function requireJsonBody(raw: RawRead, route: string): void {
  if (mediaType(raw.contentType) !== JSON_TYPE) {
    throw NodeError.badRequest(`unsupported content type '${raw.contentType ?? 'none'}': ${route} takes ${JSON_TYPE}`);
  }
}

/** A route that answers only BCS (raw_item, state_values/raw): checked after the input parsed, as a node does. */
export function requireBcsAnswer(raw: RawRead): void {
  if (acceptFormat(raw.accept) !== 'bcs')
    throw new NodeError(403, 'api_disabled', 'Only BCS is supported as an AcceptType.');
}

/** The format the client's Accept selects, and the Accept to send a node for it. */
export function answerFormat(raw: RawRead): { format: AnswerFormat; accept: string } {
  const format = acceptFormat(raw.accept);
  return { format, accept: format === 'bcs' ? BCS_TYPE : JSON_TYPE };
}

/**
 * The node path with its canonical query (only the parameters a node reads, in a
 * fixed order, none that is absent), and the same parameters as identity lines.
 */
export function withQuery(
  path: string,
  params: ReadonlyArray<readonly [string, string | bigint | undefined]>,
): { path: string; lines: string } {
  let query = '';
  let lines = '';
  for (const [name, value] of params) {
    if (value === undefined) continue;
    query += `${query === '' ? '?' : '&'}${name}=${encodeURIComponent(String(value))}`;
    if (name !== 'ledger_version') lines += `\n${name}=${String(value)}`;
  }
  return { path: path + query, lines };
}
