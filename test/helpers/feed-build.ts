// Pages of GET /v1/transactions in BCS, bcs(Vec<TransactionOnChainData>), assembled by the
// tests from their own encoder (feed-bcs.ts) and their own hashing, with the offsets of
// each part, so a test can corrupt exactly one of them.
import { bcs } from '@mysten/bcs';
import { aptosHash } from './feed-page.js';
import { Events, ExecutionStatus, type StateKey, TransactionInfo, type WriteOp, WriteSet } from './feed-bcs.js';

export type StateKeyInput = Parameters<typeof StateKey.serialize>[0];
export type WriteOpInput = Parameters<typeof WriteOp.serialize>[0];
type InfoInput = Parameters<typeof TransactionInfo.serialize>[0];
export type StatusInput = Parameters<typeof ExecutionStatus.serialize>[0];

/** A byte vector, lexicographic then shorter first: Rust's Ord of Vec<u8> and of [u8; N]. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** StateKeyInner's derived Ord: the variant, then its fields in order. */
function stateKeyOrder(key: StateKeyInput): [number, Uint8Array[]] {
  const k = key as Record<string, any>;
  if ('AccessPath' in k) return [0, [Uint8Array.from(k.AccessPath.address), Uint8Array.from(k.AccessPath.path)]];
  if ('TableItem' in k) return [1, [Uint8Array.from(k.TableItem.handle), Uint8Array.from(k.TableItem.key)]];
  if ('Raw' in k) return [2, [Uint8Array.from(k.Raw)]];
  const p = k.TradingNative.Position;
  return [3, [Uint8Array.of(0), Uint8Array.from(p.exchange), Uint8Array.from(p.account), Uint8Array.from(p.market)]];
}

/** The write set's BCS, its entries in the node's order (a BTreeMap by StateKeyInner's Ord). */
export function writeSetBytes(entries: Array<[StateKeyInput, WriteOpInput]>): Uint8Array {
  const sorted = [...entries].sort(([a], [b]) => {
    const [va, fa] = stateKeyOrder(a);
    const [vb, fb] = stateKeyOrder(b);
    if (va !== vb) return va - vb;
    for (let i = 0; i < fa.length; i++) {
      const d = compareBytes(fa[i]!, fb[i]!);
      if (d !== 0) return d;
    }
    return 0;
  });
  return WriteSet.serialize({ V0: sorted }).toBytes();
}

export interface OnChainSpec {
  version: bigint;
  /** the Transaction's BCS bytes (any bytes: a test may plant a variant no reader knows) */
  transaction: Uint8Array;
  /** bcs(Vec<ContractEvent>); none by default */
  events?: Uint8Array;
  /** the WriteSet's BCS bytes; the empty write set by default */
  writeSet?: Uint8Array;
  /** the TransactionInfo variant, V0 by default */
  infoVariant?: 'V0' | 'V1';
  status?: StatusInput;
  /** in place of the hashes of the bytes above */
  transactionHash?: Uint8Array;
  stateChangeHash?: Uint8Array;
}

/** Where each part of one TransactionOnChainData is, from its first byte (the version). */
export interface OnChainParts {
  bytes: Uint8Array;
  transaction: [number, number];
  info: [number, number];
  transactionHashAt: number;
  stateChangeHashAt: number;
  events: [number, number];
  writeSet: [number, number];
}

const EMPTY_EVENTS = Events.serialize([]).toBytes();
const EMPTY_WRITE_SET = WriteSet.serialize({ V0: [] }).toBytes();
const ZERO = new Uint8Array(32);

export function onChain(spec: OnChainSpec): OnChainParts {
  const events = spec.events ?? EMPTY_EVENTS;
  const writeSet = spec.writeSet ?? EMPTY_WRITE_SET;
  const fields = {
    gas_used: 7n,
    status: spec.status ?? ({ Success: true } as StatusInput),
    transaction_hash: spec.transactionHash ?? aptosHash('Transaction', spec.transaction),
    event_root_hash: new Uint8Array(32).fill(0xee),
    state_change_hash: spec.stateChangeHash ?? aptosHash('WriteSet', writeSet),
    state_checkpoint_hash: null,
    auxiliary_info_hash: new Uint8Array(32).fill(0xaa),
  };
  const info: InfoInput =
    spec.infoVariant === 'V1'
      ? {
          V1: {
            ...fields,
            hot_state_checkpoint_hash: new Uint8Array(32).fill(0x55),
            position_state_checkpoint_hash: null,
            placeholders: [null, null, null, null, null, null, new Uint8Array(32).fill(7)],
          },
        }
      : { V0: fields };
  const infoBytes = TransactionInfo.serialize(info).toBytes();
  const version = bcs.u64().serialize(spec.version).toBytes();
  const parts = [version, spec.transaction, infoBytes, events, ZERO, writeSet];
  const bytes = Buffer.concat(parts);
  const at = (i: number) => parts.slice(0, i).reduce((n, p) => n + p.length, 0);
  // TransactionInfo: its variant, gas_used (u64), status, transaction_hash, event_root_hash, state_change_hash, …
  const transactionHashAt = at(2) + 1 + 8 + ExecutionStatus.serialize(fields.status).toBytes().length;
  return {
    bytes,
    transaction: [at(1), at(2)],
    info: [at(2), at(3)],
    transactionHashAt,
    stateChangeHashAt: transactionHashAt + 64,
    events: [at(3), at(4)],
    writeSet: [at(5), at(6)],
  };
}

/** A length or variant index in BCS: ULEB128. */
export function uleb(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}

/** A page of these transactions, and where each starts in it. */
export function page(items: OnChainParts[]): { body: Buffer; at: number[] } {
  const count = uleb(items.length);
  const at: number[] = [];
  let offset = count.length;
  for (const item of items) {
    at.push(offset);
    offset += item.bytes.length;
  }
  return { body: Buffer.concat([count, ...items.map((i) => i.bytes)]), at };
}
