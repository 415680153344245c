// The simulated history: one user transaction per version and a block per
// SIM_VERSIONS_PER_BLOCK versions, each a deterministic function of (chain, version),
// plus a mempool of submitted transactions that commit at a chosen version.
import { bcsBytes, bcsU64, uleb128 } from './bcs.js';
import type { SimLedger } from './ledger.js';
import { simHash } from './tables.js';
import { SIM_VERSIONS_PER_BLOCK } from './ledger.js';

const u64be = (v: bigint): Buffer => {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(v);
  return out;
};

/**
 * The hash of the transaction at `version`: 24 bytes of sha256(chain ‖ version),
 * then the version (u64 BE), so the sim finds a transaction by its hash.
 */
export function simTransactionHash(chainId: number, version: bigint): string {
  return (
    '0x' +
    Buffer.concat([simHash(Buffer.from(`txn${chainId}`), bcsU64(version)).subarray(0, 24), u64be(version)]).toString(
      'hex',
    )
  );
}

/** The version a hash of simTransactionHash names, or null. */
function versionOfHash(chainId: number, hash: string): bigint | null {
  if (!/^0x[0-9a-f]{64}$/.test(hash)) return null;
  const version = Buffer.from(hash.slice(50), 'hex').readBigUInt64BE(0);
  return simTransactionHash(chainId, version) === hash ? version : null;
}

const SENDER = '0x' + 'a1'.repeat(32);
const PAYLOAD = { type: 'entry_function_payload', function: '0x1::sim::poke', type_arguments: [], arguments: [] };

function signature(hash: string): Record<string, unknown> {
  return {
    type: 'ed25519_signature',
    public_key: '0x' + 'b2'.repeat(32),
    signature: '0x' + simHash(Buffer.from(hash)).toString('hex').repeat(2),
  };
}

/** Submitted transactions, pending until the ledger reaches their version. */
export class SimMempool {
  readonly #byHash = new Map<string, bigint>();
  readonly #byVersion = new Map<bigint, string>();

  /** A transaction that is pending while the latest version is below `commitAt`, then committed at it; returns its hash. */
  submit(commitAt: bigint): string {
    // One transaction per version: a second one there would take the first one's place.
    if (this.#byVersion.has(commitAt))
      throw new RangeError(`a transaction is already submitted for version ${commitAt}`);
    const hash =
      '0x' + simHash(Buffer.from('mempool'), bcsU64(commitAt), bcsU64(BigInt(this.#byHash.size))).toString('hex');
    this.#byHash.set(hash, commitAt);
    this.#byVersion.set(commitAt, hash);
    return hash;
  }

  versionOf(hash: string): bigint | undefined {
    return this.#byHash.get(hash);
  }

  hashAt(version: bigint): string | undefined {
    return this.#byVersion.get(version);
  }
}

export class SimHistory {
  constructor(
    private readonly ledger: SimLedger,
    readonly mempool: SimMempool,
  ) {}

  hashAt(version: bigint): string {
    return this.mempool.hashAt(version) ?? simTransactionHash(this.ledger.info().chainId, version);
  }

  /** What the node knows of a hash: committed at a version, pending, or unknown. */
  lookup(hash: string): { kind: 'committed'; version: bigint } | { kind: 'pending' } | { kind: 'unknown' } {
    const latest = this.ledger.info().ledgerVersion;
    const submitted = this.mempool.versionOf(hash);
    if (submitted !== undefined)
      return submitted <= latest ? { kind: 'committed', version: submitted } : { kind: 'pending' };
    const version = versionOfHash(this.ledger.info().chainId, hash);
    return version !== null && version <= latest && this.mempool.hashAt(version) === undefined
      ? { kind: 'committed', version }
      : { kind: 'unknown' };
  }

  transactionJson(version: bigint): Record<string, unknown> {
    const hash = this.hashAt(version);
    const h = (what: string): string => '0x' + simHash(Buffer.from(what), bcsU64(version)).toString('hex');
    return {
      version: String(version),
      hash,
      state_change_hash: h('state'),
      event_root_hash: h('events'),
      state_checkpoint_hash: null,
      gas_used: String(5 + Number(version % 7n)),
      success: true,
      vm_status: 'Executed successfully',
      accumulator_root_hash: h('accumulator'),
      changes: [],
      sender: SENDER,
      sequence_number: String(version),
      max_gas_amount: '200000',
      gas_unit_price: '100',
      expiration_timestamp_secs: String(this.ledger.timestampAt(version) / 1_000_000n + 600n),
      payload: PAYLOAD,
      signature: signature(hash),
      events: [],
      timestamp: String(this.ledger.timestampAt(version)),
      type: 'user_transaction',
    };
  }

  pendingJson(hash: string): Record<string, unknown> {
    return {
      hash,
      sender: SENDER,
      sequence_number: '0',
      max_gas_amount: '200000',
      gas_unit_price: '100',
      expiration_timestamp_secs: String(this.ledger.timestampAt(this.ledger.info().ledgerVersion) / 1_000_000n + 600n),
      payload: PAYLOAD,
      signature: signature(hash),
      type: 'pending_transaction',
    };
  }

  /** TransactionData::Pending's shape: variant 1, then (enough to tell transactions apart) the hash. */
  pendingBcs(hash: string): Buffer {
    return Buffer.concat([Buffer.from([1]), Buffer.from(hash.slice(2), 'hex')]);
  }

  /** TransactionData::OnChain's shape: variant 0, the version, then the hash (enough to tell transactions apart). */
  transactionBcs(version: bigint): Buffer {
    return Buffer.concat([Buffer.from([0]), bcsU64(version), Buffer.from(this.hashAt(version).slice(2), 'hex')]);
  }

  blockRange(height: bigint): { first: bigint; last: bigint } {
    return {
      first: height * SIM_VERSIONS_PER_BLOCK,
      last: height * SIM_VERSIONS_PER_BLOCK + SIM_VERSIONS_PER_BLOCK - 1n,
    };
  }

  blockJson(height: bigint, withTransactions: boolean): Record<string, unknown> {
    const { first, last } = this.blockRange(height);
    const transactions: Array<Record<string, unknown>> = [];
    if (withTransactions) for (let v = first; v <= last; v++) transactions.push(this.transactionJson(v));
    return {
      block_height: String(height),
      block_hash: '0x' + simHash(Buffer.from('block'), bcsU64(height)).toString('hex'),
      block_timestamp: String(this.ledger.timestampAt(first)),
      first_version: String(first),
      last_version: String(last),
      transactions: withTransactions ? transactions : null,
    };
  }

  /** BcsBlock: height, hash, timestamp, first and last version, optional transactions. */
  blockBcs(height: bigint, withTransactions: boolean): Buffer {
    const { first, last } = this.blockRange(height);
    const parts = [
      bcsU64(height),
      bcsBytes(simHash(Buffer.from('block'), bcsU64(height))),
      bcsU64(this.ledger.timestampAt(first)),
      bcsU64(first),
      bcsU64(last),
    ];
    if (!withTransactions) parts.push(Buffer.from([0]));
    else {
      parts.push(Buffer.from([1]), uleb128(Number(last - first + 1n)));
      for (let v = first; v <= last; v++) parts.push(this.transactionBcs(v));
    }
    return Buffer.concat(parts);
  }
}
