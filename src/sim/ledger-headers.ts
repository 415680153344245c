// The seven ledger headers a node sends and the body of GET /v1 (api.md §4, §6),
// written apart from the proxy's src/ledger/ on purpose: the sim is the oracle
// the proxy is judged against, so it must not share the proxy's encoders.
import type { LedgerInfo } from '../ledger/info.js';

/** What a node names by its vendor: its header prefix and its BCS view request type. */
export interface SimVendorNames {
  /** lower-case, e.g. "x-node-" */
  headerPrefix: string;
  /** e.g. "application/x.node.view_function+bcs" */
  viewBcsMediaType: string;
}

/** A vendor is lower-case letters: a node's headers and media types are built from it. */
export const SIM_VENDOR_PATTERN = /^[a-z]+$/;

export function simVendorNames(vendor: string): SimVendorNames {
  if (!SIM_VENDOR_PATTERN.test(vendor)) throw new Error(`vendor must match ${SIM_VENDOR_PATTERN}: ${vendor}`);
  return { headerPrefix: `x-${vendor}-`, viewBcsMediaType: `application/x.${vendor}.view_function+bcs` };
}

export interface SimHeaderNames {
  ledger: ReadonlyArray<readonly [string, (info: LedgerInfo) => bigint | number]>;
  gasUsed: string;
  cursor: string;
}

/** Lower-case names under a prefix such as "x-node-". */
export function simHeaderNames(prefix: string): SimHeaderNames {
  return {
    ledger: [
      [`${prefix}chain-id`, (i) => i.chainId],
      [`${prefix}ledger-version`, (i) => i.ledgerVersion],
      [`${prefix}ledger-oldest-version`, (i) => i.oldestLedgerVersion],
      [`${prefix}ledger-timestampusec`, (i) => i.ledgerTimestampUsec],
      [`${prefix}epoch`, (i) => i.epoch],
      [`${prefix}block-height`, (i) => i.blockHeight],
      [`${prefix}oldest-block-height`, (i) => i.oldestBlockHeight],
    ],
    gasUsed: `${prefix}gas-used`,
    cursor: `${prefix}cursor`,
  };
}

export function simLedgerHeaders(names: SimHeaderNames, info: LedgerInfo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of names.ledger) out[name] = String(value(info));
  return out;
}

/** GET /v1: the ledger info, u64s as strings and the chain id as a number. */
export function simLedgerInfoJson(info: LedgerInfo, gitHash: string): Record<string, unknown> {
  return {
    chain_id: info.chainId,
    epoch: String(info.epoch),
    ledger_version: String(info.ledgerVersion),
    oldest_ledger_version: String(info.oldestLedgerVersion),
    ledger_timestamp: String(info.ledgerTimestampUsec),
    node_role: 'full_node',
    oldest_block_height: String(info.oldestBlockHeight),
    block_height: String(info.blockHeight),
    git_hash: gitHash,
  };
}
