// The transaction at each version of the sparse model, as a node's feed holds it: a
// block's BlockMetadataExt, its user transactions, its BlockEpilogue, each with its
// TransactionInfo, events and exactly the writes the model made at that version. The
// tweaks are the feed's fault modes: what a broken or newer node could send instead.
import { simAddressBytes } from '../parse/address.js';
import { bcsBytes, bcsSeq, bcsU64 } from '../state/bcs.js';
import { SIM_VERSIONS_PER_BLOCK, SIM_VERSIONS_PER_EPOCH, type SimLedger } from '../state/ledger.js';
import { simHash } from '../state/tables.js';
import { SIM_MODULE_ADDRESS } from '../state/views.js';
import { simSaltedHash, simStructTag } from '../sparse/keys.js';
import type { SimSparseModel, SimWrite } from '../sparse/model.js';
import { simVersionKind } from '../sparse/schedule.js';
import {
  bcsAccountEd25519,
  bcsBlockEpilogue,
  bcsBlockMetadataExt,
  bcsEd25519Authenticator,
  bcsEvent,
  bcsFeePayerAuthenticator,
  bcsOnChainData,
  bcsSingleSenderAuthenticator,
  bcsTransactionInfo,
  bcsUserTransaction,
  bcsWriteOp,
  bcsWriteSet,
  simEventRootHash,
  type SimEvent,
} from './encode.js';

/** Where a page holds a variant no decoder of today knows. */
export type SimUnknownVariant = 'authenticator' | 'event' | 'transaction_info' | 'write_op';

export interface SimTransactionTweaks {
  wrongTransactionHash?: boolean;
  wrongStateChangeHash?: boolean;
  /** the write set empty, and its hash the empty one's: a page that verifies and lies */
  noWrites?: boolean;
  unknownVariant?: SimUnknownVariant;
}

const h = (what: string, version: bigint): Buffer => simHash(Buffer.from(what), bcsU64(version));
const flip = (hash: Buffer): Buffer => Buffer.concat([Buffer.from([hash[0] ^ 0xff]), hash.subarray(1)]);
const NEW_BLOCK = simStructTag('0x1::block::NewBlockEvent');
const FEE_STATEMENT = simStructTag('0x1::transaction_fee::FeeStatement');
const POKED = simStructTag('0x1::sim::Poked');
const APTOS_COIN = simStructTag('0x1::aptos_coin::AptosCoin');
/** An odd block's epilogue (V1) distributes fees to validators 1 and 256, whose keys sort 256 first in BCS. */
const FEES: Array<[bigint, bigint]> = [
  [1n, 120n],
  [256n, 80n],
];

function writeSet(writes: SimWrite[], version: bigint, ledger: SimLedger, unknownOp: boolean): Buffer {
  const entries = writes.map(({ key, op, value }) => {
    const metadata = key.withMetadata
      ? {
          slotDeposit: 40_000n,
          bytesDeposit: BigInt(value?.length ?? 0) * 40n,
          creationTimeUsecs: ledger.timestampAt(0n),
        }
      : null;
    return { stateKey: key.stateKey, op: bcsWriteOp(op, value, metadata) };
  });
  if (unknownOp) {
    // A write op of a kind after DeletionWithMetadata: nothing after it parses.
    const stateKey = Buffer.concat([Buffer.from([1]), h('unknown op', version), bcsBytes(Buffer.from([0]))]);
    entries.push({ stateKey, op: Buffer.concat([Buffer.from([6]), bcsBytes(h('op', version))]) });
  }
  return bcsWriteSet(entries);
}

function metadata(version: bigint, ledger: SimLedger): { transaction: Buffer; events: SimEvent[] } {
  const height = version / SIM_VERSIONS_PER_BLOCK;
  const epoch = version / SIM_VERSIONS_PER_EPOCH + 1n;
  const id = simHash(Buffer.from('block'), bcsU64(height));
  const proposer = '0x' + simHash(Buffer.from('validator'), bcsU64(height % 7n)).toString('hex');
  const timestampUsecs = ledger.timestampAt(version);
  const failed = height % 5n === 0n ? [2] : [];
  const transaction = bcsBlockMetadataExt({
    id,
    epoch,
    round: height,
    proposer,
    previousBlockVotesBitvec: Buffer.from([0xef, 0x7f]),
    failedProposerIndices: failed,
    timestampUsecs,
    randomness: { epoch, round: height, randomness: h('randomness', version) },
  });
  // 0x1::block::NewBlockEvent {hash, epoch, round, height, previous_block_votes_bitvec, proposer,
  // failed_proposer_indices: vector<u64>, time_microseconds}
  const data = Buffer.concat([
    id,
    bcsU64(epoch),
    bcsU64(height),
    bcsU64(height),
    bcsBytes(Buffer.from([0xef, 0x7f])),
    simAddressBytes(proposer),
    bcsSeq(failed.map((i) => bcsU64(BigInt(i)))),
    bcsU64(timestampUsecs),
  ]);
  const event: SimEvent = {
    kind: 'v1',
    creationNumber: 3n,
    account: SIM_MODULE_ADDRESS,
    sequenceNumber: height,
    type: NEW_BLOCK,
    data,
  };
  return { transaction, events: [event] };
}

function user(
  n: bigint,
  version: bigint,
  writes: SimWrite[],
  model: SimSparseModel,
  ledger: SimLedger,
  unknownAuthenticator: boolean,
): { transaction: Buffer; events: SimEvent[] } {
  const accounts = model.universe.accounts;
  // The sender is the account whose sequence number this version raises, if one does.
  const written = writes.find((w) => w.key.kind === 'account' && w.key.owner !== SIM_MODULE_ADDRESS)?.key;
  const sender = written?.owner ?? accounts[Number(n % BigInt(Math.max(1, accounts.length)))] ?? SIM_MODULE_ADDRESS;
  const senderAccount = model.keysAt(sender).find((k) => k.kind === 'account');
  const before = senderAccount === undefined ? null : model.stateAt(senderAccount, version - 1n);
  const sequenceNumber = before === null ? n : before.bytes.readBigUInt64LE(33);
  const publicKey = h('public key', BigInt(simAddressBytes(sender).readUInt32LE(0)));
  const signature = Buffer.concat([h('signature', version), h('signature 2', version)]);
  const feePayer = '0x' + h('fee payer', n % 3n).toString('hex');
  const authenticator = unknownAuthenticator
    ? Buffer.concat([Buffer.from([9]), bcsBytes(publicKey), bcsBytes(signature)])
    : n % 3n === 0n
      ? bcsEd25519Authenticator(publicKey, signature)
      : n % 3n === 1n
        ? bcsFeePayerAuthenticator(
            bcsAccountEd25519(publicKey, signature),
            feePayer,
            bcsAccountEd25519(publicKey, signature),
          )
        : bcsSingleSenderAuthenticator(publicKey, signature);
  const transfer = n % 2n === 0n;
  const transaction = bcsUserTransaction({
    sender,
    sequenceNumber,
    module: { address: SIM_MODULE_ADDRESS, name: transfer ? 'coin' : 'sim' },
    function: transfer ? 'transfer' : 'poke',
    typeArgs: transfer ? [APTOS_COIN] : [],
    args: transfer ? [simAddressBytes(accounts[0] ?? SIM_MODULE_ADDRESS), bcsU64(n * 1000n)] : [],
    maxGasAmount: 200_000n,
    gasUnitPrice: 100n,
    expirationTimestampSecs: ledger.timestampAt(version) / 1_000_000n + 600n,
    chainId: ledger.info().chainId,
    authenticator,
  });
  const gas = 5n + (version % 7n);
  const fee = Buffer.concat([bcsU64(gas), bcsU64(gas - 2n), bcsU64(2n), bcsU64(0n), bcsU64(0n)]);
  const events: SimEvent[] = [
    { kind: 'v1', creationNumber: 0n, account: sender, sequenceNumber: n, type: POKED, data: bcsU64(version) },
    { kind: 'v2', type: FEE_STATEMENT, data: fee },
  ];
  return { transaction, events };
}

function epilogue(version: bigint): { transaction: Buffer; events: SimEvent[] } {
  const height = version / SIM_VERSIONS_PER_BLOCK;
  const transaction = bcsBlockEpilogue({
    blockId: simHash(Buffer.from('block'), bcsU64(height)),
    gasLimitReached: false,
    outputLimitReached: height % 11n === 0n,
    effectiveGasUnits: 20n + (height % 13n),
    approxOutputSize: 4000n + (height % 997n),
    ...(height % 2n === 1n ? { feeDistribution: FEES } : {}),
  });
  return { transaction, events: [] };
}

/** bcs(TransactionOnChainData) of the transaction at `version`. */
export function simFeedTransaction(
  model: SimSparseModel,
  ledger: SimLedger,
  version: bigint,
  tweaks: SimTransactionTweaks = {},
): Buffer {
  const writes = model.writesAt(version);
  const kind = simVersionKind(version);
  const body =
    kind.kind === 'metadata'
      ? metadata(version, ledger)
      : kind.kind === 'epilogue'
        ? epilogue(version)
        : user(kind.n, version, writes, model, ledger, tweaks.unknownVariant === 'authenticator');
  const events = body.events.map(bcsEvent);
  if (tweaks.unknownVariant === 'event') events.push(Buffer.concat([Buffer.from([2]), bcsBytes(h('event', version))]));
  const changes = writeSet(tweaks.noWrites ? [] : writes, version, ledger, tweaks.unknownVariant === 'write_op');
  const transactionHash = simSaltedHash('Transaction', body.transaction);
  const stateChangeHash = simSaltedHash('WriteSet', changes);
  const info = bcsTransactionInfo({
    gasUsed: kind.kind === 'user' ? 5n + (version % 7n) : 0n,
    transactionHash: tweaks.wrongTransactionHash ? flip(transactionHash) : transactionHash,
    eventRootHash: simEventRootHash(events),
    stateChangeHash: tweaks.wrongStateChangeHash ? flip(stateChangeHash) : stateChangeHash,
    stateCheckpointHash: kind.kind === 'epilogue' ? h('checkpoint', version) : null,
    auxiliaryInfoHash: null,
  });
  // A TransactionInfo of a version after every one known (aptos-core has V0 and V1), its fields unknown.
  const infoBytes =
    tweaks.unknownVariant === 'transaction_info'
      ? Buffer.concat([Buffer.from([9]), info.subarray(1), h('info', version)])
      : info;
  return bcsOnChainData({
    version,
    transaction: body.transaction,
    info: infoBytes,
    events,
    accumulatorRootHash: h('accumulator', version),
    writeSet: changes,
  });
}
