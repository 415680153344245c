// Transactions of every kind the golden has, with every payload, authenticator, key and
// signature scheme, events of both versions with every kind of type tag, and write sets
// with every StateKey kind and WriteOp: values for the tests' encoder (feed-bcs.ts).
import { Path, StateKey, Transaction } from './feed-bcs.js';
import type { StateKeyInput, WriteOpInput } from './feed-build.js';

/** `n` bytes that look like keys, signatures and data do (no runs of one value), the same for the same seed. */
export function fill(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = (seed * 2654435761 + n * 40503 + 1) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
export const addr = (byte: number): Uint8Array => fill(32, byte);
/** 0x1 */
const one = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0));

export const struct = (module: string, name: string, type_args: unknown[] = [], address = one) => ({
  struct: { address, module, name, type_args },
});
const coin = struct('coin', 'CoinStore', [struct('aptos_coin', 'AptosCoin')]);
/** Type tags of every kind: primitives, signed integers, vectors, structs, functions with reference kinds. */
export const TYPE_TAGS = [
  { bool: true },
  { u8: true },
  { u16: true },
  { u32: true },
  { u64: true },
  { u128: true },
  { u256: true },
  { address: true },
  { signer: true },
  { i8: true },
  { i16: true },
  { i32: true },
  { i64: true },
  { i128: true },
  { i256: true },
  { vector: { vector: { u8: true } } },
  coin,
  struct('table', 'Table', [{ address: true }, { vector: coin }]),
  {
    Function: {
      args: [{ Reference: coin }, { MutableReference: { u64: true } }, { Value: { vector: { i32: true } } }],
      results: [{ Value: { bool: true } }, { Reference: { Function: { args: [], results: [], abilities: 0 } } }],
      abilities: 0b1011,
    },
  },
];

const ed = (b: number) => ({ Ed25519: { public_key: fill(32, b), signature: fill(64, b) } });
const assertion = {
  signature: { Secp256r1Ecdsa: { signature: fill(64, 3) } },
  authenticator_data: fill(37, 4),
  client_data_json: fill(90, 5),
};
const keyless = { iss_val: 'https://accounts.google.com', idc: fill(32, 6) };
const zk = (tw: boolean) => ({
  ZeroKnowledgeSig: {
    proof: { Groth16: { a: fill(32, 1), b: fill(64, 2), c: fill(32, 3) } },
    exp_horizon_secs: 10_000_000n,
    extra_field: tw ? '"extra":1' : null,
    override_aud_val: tw ? 'aud' : null,
    training_wheels_signature: tw ? { Ed25519: { signature: fill(64, 9) } } : null,
  },
});
const openId = {
  OpenIdSig: {
    jwt_sig: fill(256, 1),
    jwt_payload_json: '{}',
    uid_key: 'sub',
    epk_blinder: fill(31, 2),
    pepper: fill(31, 3),
    idc_aud_val: 'aud',
  },
};
const keylessSignature = (cert: unknown, webauthn: boolean) => ({
  Keyless: {
    signature: {
      cert,
      jwt_header_json: '{"alg":"RS256"}',
      exp_date_secs: 1_800_000_000n,
      ephemeral_pubkey: webauthn
        ? { Secp256r1Ecdsa: { public_key: fill(65, 7) } }
        : { Ed25519: { public_key: fill(32, 7) } },
      ephemeral_signature: webauthn ? { WebAuthn: { signature: assertion } } : { Ed25519: { signature: fill(64, 8) } },
    },
  },
});
const ANY_PUBLIC_KEYS = [
  { Ed25519: { public_key: fill(32, 1) } },
  { Secp256k1Ecdsa: { public_key: fill(65, 2) } },
  { Secp256r1Ecdsa: { public_key: fill(65, 3) } },
  { Keyless: { public_key: keyless } },
  { FederatedKeyless: { public_key: { jwk_addr: addr(4), pk: keyless } } },
  { SlhDsa_Sha2_128s: { public_key: fill(32, 5) } },
];
const ANY_SIGNATURES = [
  { Ed25519: { signature: fill(64, 1) } },
  { Secp256k1Ecdsa: { signature: fill(64, 2) } },
  { WebAuthn: { signature: assertion } },
  keylessSignature(zk(true), false),
  keylessSignature(zk(false), true),
  keylessSignature(openId, false),
  { SlhDsa_Sha2_128s: { signature: fill(7856, 6) } },
];
const singleKey = (i: number) => ({
  SingleKey: { authenticator: { public_key: ANY_PUBLIC_KEYS[i % 6], signature: ANY_SIGNATURES[i % 7] } },
});
const multiKey = {
  MultiKey: {
    authenticator: {
      public_keys: { public_keys: ANY_PUBLIC_KEYS, signatures_required: 2 },
      signatures: ANY_SIGNATURES,
      signatures_bitmap: { inner: [0xff, 0x80] },
    },
  },
};
const abstraction = (derivable: boolean) => ({
  Abstraction: {
    function_info: { module_address: addr(9), module_name: 'auth', function_name: 'authenticate' },
    auth_data: derivable
      ? {
          DerivableV1: {
            signing_message_digest: fill(32, 1),
            abstract_signature: fill(70, 2),
            abstract_public_key: fill(40, 3),
          },
        }
      : { V1: { signing_message_digest: fill(32, 1), authenticator: fill(70, 2) } },
  },
});
const multiEd = { MultiEd25519: { public_key: fill(65, 2), signature: fill(132, 3) } };
/** Every TransactionAuthenticator, with every AccountAuthenticator inside one of them. */
export const AUTHENTICATORS = [
  ed(1),
  multiEd,
  {
    MultiAgent: {
      sender: ed(1),
      secondary_signer_addresses: [addr(2), addr(3)],
      secondary_signers: [multiEd, { NoAccountAuthenticator: true }],
    },
  },
  {
    FeePayer: {
      sender: singleKey(0),
      secondary_signer_addresses: [addr(2), addr(3), addr(4), addr(5), addr(6), addr(7)],
      secondary_signers: [1, 2, 3, 4, 5, 6].map(singleKey),
      fee_payer_address: addr(8),
      fee_payer_signer: multiKey,
    },
  },
  { SingleSender: { sender: abstraction(false) } },
  { SingleSender: { sender: abstraction(true) } },
  { SingleSender: { sender: singleKey(6) } },
];

const entryFunction = {
  module: { address: one, name: 'coin' },
  function: 'transfer',
  ty_args: TYPE_TAGS,
  args: [fill(32, 1), fill(8, 2)],
};
const ARGUMENTS = [
  { U8: 1 },
  { U64: 2n },
  { U128: 3n },
  { Address: addr(4) },
  { U8Vector: fill(10, 5) },
  { Bool: true },
  { U16: 6 },
  { U32: 7 },
  { U256: 8n },
  { Serialized: fill(12, 9) },
  { I8: [0xff] },
  { I16: [1, 2] },
  { I32: [1, 2, 3, 4] },
  { I64: fill(8, 1) },
  { I128: fill(16, 1) },
  { I256: fill(32, 1) },
];
export const script = { code: fill(300, 0xa1), ty_args: [{ u64: true }, coin], args: ARGUMENTS };
const extra = (multisig: boolean, nonce: boolean) => ({
  V1: { multisig_address: multisig ? addr(5) : null, replay_protection_nonce: nonce ? 77n : null },
});
/** Every TransactionPayload and, inside Payload, every TransactionExecutable. */
export const PAYLOADS = [
  { Script: script },
  { ModuleBundle: { dummy_value: 0n } },
  { EntryFunction: entryFunction },
  { Multisig: { multisig_address: addr(5), transaction_payload: { EntryFunction: entryFunction } } },
  { Multisig: { multisig_address: addr(5), transaction_payload: null } },
  { Payload: { V1: { executable: { Script: script }, extra_config: extra(false, true) } } },
  { Payload: { V1: { executable: { EntryFunction: entryFunction }, extra_config: extra(true, false) } } },
  { Payload: { V1: { executable: { Empty: true }, extra_config: extra(true, true) } } },
];

export function userTransaction(payload: unknown, authenticator: unknown, sequence = 1n): Uint8Array {
  return Transaction.serialize({
    UserTransaction: {
      raw_txn: {
        sender: addr(0x51),
        sequence_number: sequence,
        payload,
        max_gas_amount: 100_000n,
        gas_unit_price: 100n,
        expiration_timestamp_secs: 1_762_134_858n,
        chain_id: 1,
      },
      authenticator,
    },
  } as never).toBytes();
}

const pathOf = (path: unknown) => Path.serialize(path as never).toBytes();
/** Keys of every kind, as the tests' encoder writes them, with the kind and address the reader must say. */
export const STATE_KEYS: Array<{ key: StateKeyInput; kind: string; address?: Uint8Array }> = [
  {
    key: { AccessPath: { address: addr(0x21), path: pathOf({ Code: { address: addr(0x21), name: 'dex' } }) } },
    kind: 'code',
    address: addr(0x21),
  },
  {
    key: { AccessPath: { address: addr(0x22), path: pathOf({ Resource: coin.struct }) } },
    kind: 'resource',
    address: addr(0x22),
  },
  {
    key: {
      AccessPath: { address: addr(0x23), path: pathOf({ ResourceGroup: struct('object', 'ObjectGroup').struct }) },
    },
    kind: 'resource_group',
    address: addr(0x23),
  },
  // A path that is no Path: a variant past ResourceGroup, and a Resource with a byte after it.
  { key: { AccessPath: { address: addr(0x24), path: [7, 1, 2, 3] } }, kind: 'access_path', address: addr(0x24) },
  {
    key: { AccessPath: { address: addr(0x25), path: [...pathOf({ Resource: coin.struct }), 0] } },
    kind: 'access_path',
    address: addr(0x25),
  },
  { key: { TableItem: { handle: addr(0x26), key: fill(40, 1) } }, kind: 'table_item' },
  { key: { TableItem: { handle: addr(0x27), key: [] } }, kind: 'table_item' },
  { key: { Raw: fill(20, 2) }, kind: 'raw' },
  {
    key: { TradingNative: { Position: { exchange: addr(0x28), account: addr(0x29), market: addr(0x2a) } } },
    kind: 'trading_native',
  },
];
/** Every WriteOp, with both metadata versions. */
export const WRITE_OPS: WriteOpInput[] = [
  { Creation: fill(120, 1) },
  { Modification: fill(300, 2) },
  { Deletion: true },
  { CreationWithMetadata: { data: fill(200, 3), metadata: { V0: { deposit: 5n, creation_time_usecs: 6n } } } },
  {
    ModificationWithMetadata: {
      data: fill(10, 4),
      metadata: { V1: { slot_deposit: 1n, bytes_deposit: 2n, creation_time_usecs: 3n } },
    },
  },
  { DeletionWithMetadata: { metadata: { V1: { slot_deposit: 1n, bytes_deposit: 2n, creation_time_usecs: 3n } } } },
];

export const stateKeyBytes = (key: StateKeyInput): Uint8Array => StateKey.serialize(key).toBytes();
