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

function u64(headers: HeaderBag, name: string): bigint | null {
  const text = one(headers, name);
  return text !== undefined ? parseU64(text) : null;
}

/** The snapshot in a node's headers (lower-case keys), or null unless all seven are valid. */
export function decodeLedgerHeaders(names: LedgerHeaderNames, headers: HeaderBag): LedgerInfo | null {
  const chainId = u64(headers, names.chainId);
  const ledgerVersion = u64(headers, names.ledgerVersion);
  const oldestLedgerVersion = u64(headers, names.oldestVersion);
  const ledgerTimestampUsec = u64(headers, names.timestampUsec);
  const epoch = u64(headers, names.epoch);
  const blockHeight = u64(headers, names.blockHeight);
  const oldestBlockHeight = u64(headers, names.oldestBlockHeight);
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
