// api.md §4: the ledger headers under the vendor prefix. Encodes a LedgerInfo into the
// seven headers and decodes them back from a node's answer (all seven, or none), and
// reads which vendor's prefix an answer's headers bear.
import { parseU64 } from '../wire/u64.js';
import type { LedgerInfo } from './info.js';

export interface LedgerHeaderNames {
  chainId: string;
  ledgerVersion: string;
  oldestVersion: string;
  timestampUsec: string;
  epoch: string;
  blockHeight: string;
  oldestBlockHeight: string;
  gasUsed: string;
  cursor: string;
  /** the SDK a client names itself by (x-aptos-client), passed on to nodes */
  client: string;
}

/** Lower-case header names for a prefix such as "x-node-". */
export function ledgerHeaderNames(prefix: string): LedgerHeaderNames {
  return {
    chainId: `${prefix}chain-id`,
    ledgerVersion: `${prefix}ledger-version`,
    oldestVersion: `${prefix}ledger-oldest-version`,
    timestampUsec: `${prefix}ledger-timestampusec`,
    epoch: `${prefix}epoch`,
    blockHeight: `${prefix}block-height`,
    oldestBlockHeight: `${prefix}oldest-block-height`,
    gasUsed: `${prefix}gas-used`,
    cursor: `${prefix}cursor`,
    client: `${prefix}client`,
  };
}

const LEDGER_VERSION_HEADER = /^x-([a-z]+)-ledger-version$/;

/** The vendor whose ledger headers an answer carries (a node answers GET /v1 with them); null when it carries none. */
export function vendorOfHeaders(headers: Record<string, unknown>): string | null {
  for (const name in headers) {
    const match = LEDGER_VERSION_HEADER.exec(name);
    if (match !== null) return match[1]!;
  }
  return null;
}

export type HeaderPairs = Array<[string, string]>;

export function encodeLedgerHeaders(names: LedgerHeaderNames, info: LedgerInfo): HeaderPairs {
  return [
    [names.chainId, String(info.chainId)],
    [names.ledgerVersion, String(info.ledgerVersion)],
    [names.oldestVersion, String(info.oldestLedgerVersion)],
    [names.timestampUsec, String(info.ledgerTimestampUsec)],
    [names.epoch, String(info.epoch)],
    [names.blockHeight, String(info.blockHeight)],
    [names.oldestBlockHeight, String(info.oldestBlockHeight)],
  ];
}

type HeaderBag = Record<string, string | string[] | undefined>;

function one(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The snapshot in a node's headers (lower-case keys), or null unless all seven are valid. */
export function decodeLedgerHeaders(names: LedgerHeaderNames, headers: HeaderBag): LedgerInfo | null {
  return decodeLedgerTexts(ledgerTexts(names, headers));
}

type LedgerTexts = readonly [
  string | undefined,
  string | undefined,
  string | undefined,
  string | undefined,
  string | undefined,
  string | undefined,
  string | undefined,
];

/** The seven header values, in LedgerInfo's order. */
function ledgerTexts(names: LedgerHeaderNames, headers: HeaderBag): LedgerTexts {
  return [
    one(headers, names.chainId),
    one(headers, names.ledgerVersion),
    one(headers, names.oldestVersion),
    one(headers, names.timestampUsec),
    one(headers, names.epoch),
    one(headers, names.blockHeight),
    one(headers, names.oldestBlockHeight),
  ];
}

/**
 * decodeLedgerHeaders for the answers of one node, which repeat their snapshot
 * from call to call until the ledger moves: the seven values are compared with
 * the last ones, and decoded only when one differs.
 */
export class LedgerHeaderDecoder {
  private lastTexts: LedgerTexts | undefined;
  private lastInfo: LedgerInfo | null = null;

  decode(names: LedgerHeaderNames, headers: HeaderBag): LedgerInfo | null {
    const texts = ledgerTexts(names, headers);
    const last = this.lastTexts;
    if (last !== undefined && sameTexts(texts, last)) return this.lastInfo;
    this.lastInfo = decodeLedgerTexts(texts);
    this.lastTexts = texts;
    return this.lastInfo;
  }
}

function sameTexts(a: LedgerTexts, b: LedgerTexts): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function u64Of(text: string | undefined): bigint | null {
  return text !== undefined ? parseU64(text) : null;
}

function decodeLedgerTexts(texts: LedgerTexts): LedgerInfo | null {
  const chainId = u64Of(texts[0]);
  const ledgerVersion = u64Of(texts[1]);
  const oldestLedgerVersion = u64Of(texts[2]);
  const ledgerTimestampUsec = u64Of(texts[3]);
  const epoch = u64Of(texts[4]);
  const blockHeight = u64Of(texts[5]);
  const oldestBlockHeight = u64Of(texts[6]);
  if (
    chainId === null ||
    chainId > 255n ||
    ledgerVersion === null ||
    oldestLedgerVersion === null ||
    ledgerTimestampUsec === null ||
    epoch === null ||
    blockHeight === null ||
    oldestBlockHeight === null
  ) {
    return null;
  }
  return {
    chainId: Number(chainId),
    epoch,
    ledgerVersion,
    oldestLedgerVersion,
    ledgerTimestampUsec,
    blockHeight,
    oldestBlockHeight,
  };
}

/** A gas-used header value, when the node sent a valid one. */
export function decodeGasUsed(names: LedgerHeaderNames, headers: HeaderBag): string | undefined {
  const text = one(headers, names.gasUsed);
  return text !== undefined && parseU64(text) !== null ? text : undefined;
}
