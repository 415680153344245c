// api.md §4/§6: one observation of a node's ledger. The seven ledger headers and
// GET /v1 carry the same values, and always travel together.
import { parseU64 } from '../wire/u64.js';

export interface LedgerInfo {
  chainId: number;
  epoch: bigint;
  ledgerVersion: bigint;
  oldestLedgerVersion: bigint;
  ledgerTimestampUsec: bigint;
  blockHeight: bigint;
  oldestBlockHeight: bigint;
}

function u64Field(value: unknown): bigint | null {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' ? parseU64(text) : null;
}

/** Parses a GET /v1 body; null when any field is missing or malformed. */
export function parseLedgerInfoJson(body: unknown): LedgerInfo | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  const chainId = b.chain_id;
  const fields = [
    b.epoch,
    b.ledger_version,
    b.oldest_ledger_version,
    b.ledger_timestamp,
    b.block_height,
    b.oldest_block_height,
  ].map(u64Field);
  if (typeof chainId !== 'number' || !Number.isInteger(chainId) || chainId < 0 || chainId > 255) return null;
  if (fields.some((f) => f === null)) return null;
  const [epoch, ledgerVersion, oldestLedgerVersion, ledgerTimestampUsec, blockHeight, oldestBlockHeight] =
    fields as bigint[];
  return { chainId, epoch, ledgerVersion, oldestLedgerVersion, ledgerTimestampUsec, blockHeight, oldestBlockHeight };
}
