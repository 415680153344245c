// The GET /v1 answer a node sends for a ledger snapshot: what tests expect of the
// sim and what a fake node answers. The proxy only parses this body (ledger/info.ts).
import type { LedgerInfo } from '../../src/ledger/info.js';

/** The GET /v1 answer as a node sends it. */
export function ledgerInfoJson(info: LedgerInfo, gitHash: string): Record<string, unknown> {
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
