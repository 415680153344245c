// A user transaction as the ledger serializes it (aptos-core's api.yaml golden), written
// with @mysten/bcs: part of the tests' own encoder of transaction pages (feed-bcs.ts),
// independent of the reader in src/writes/.
import { bcs } from '@mysten/bcs';
import { Address, Bytes, EntryFunction, Hash, Script } from './feed-bcs-move.js';

const Executable = bcs.enum('TransactionExecutable', { Script, EntryFunction, Empty: null });
const ExtraConfig = bcs.enum('TransactionExtraConfig', {
  V1: bcs.struct('V1', { multisig_address: bcs.option(Address), replay_protection_nonce: bcs.option(bcs.u64()) }),
});
const TransactionPayload = bcs.enum('TransactionPayload', {
  Script,
  ModuleBundle: bcs.struct('DeprecatedPayload', { dummy_value: bcs.u64() }),
  EntryFunction,
  Multisig: bcs.struct('Multisig', {
    multisig_address: Address,
    transaction_payload: bcs.option(bcs.enum('MultisigTransactionPayload', { EntryFunction })),
  }),
  Payload: bcs.enum('TransactionPayloadInner', {
    V1: bcs.struct('V1', { executable: Executable, extra_config: ExtraConfig }),
  }),
});
export const RawTransaction = bcs.struct('RawTransaction', {
  sender: Address,
  sequence_number: bcs.u64(),
  payload: TransactionPayload,
  max_gas_amount: bcs.u64(),
  gas_unit_price: bcs.u64(),
  expiration_timestamp_secs: bcs.u64(),
  chain_id: bcs.u8(),
});
const Assertion = bcs.struct('PartialAuthenticatorAssertionResponse', {
  signature: bcs.enum('AssertionSignature', { Secp256r1Ecdsa: bcs.struct('S', { signature: Bytes }) }),
  authenticator_data: Bytes,
  client_data_json: Bytes,
});
const key = (name: string) => bcs.struct(name, { public_key: Bytes });
const signature = (name: string) => bcs.struct(name, { signature: Bytes });
const EphemeralSignature = bcs.enum('EphemeralSignature', {
  Ed25519: signature('Ed25519'),
  WebAuthn: bcs.struct('WebAuthn', { signature: Assertion }),
});
const KeylessPublicKey = bcs.struct('KeylessPublicKey', { iss_val: bcs.string(), idc: Bytes });
const AnyPublicKey = bcs.enum('AnyPublicKey', {
  Ed25519: key('Ed25519'),
  Secp256k1Ecdsa: key('Secp256k1Ecdsa'),
  Secp256r1Ecdsa: key('Secp256r1Ecdsa'),
  Keyless: bcs.struct('Keyless', { public_key: KeylessPublicKey }),
  FederatedKeyless: bcs.struct('FederatedKeyless', {
    public_key: bcs.struct('FederatedKeylessPublicKey', { jwk_addr: Address, pk: KeylessPublicKey }),
  }),
  SlhDsa_Sha2_128s: key('SlhDsa_Sha2_128s'),
});
const KeylessSignature = bcs.struct('KeylessSignature', {
  cert: bcs.enum('EphemeralCertificate', {
    ZeroKnowledgeSig: bcs.struct('ZeroKnowledgeSig', {
      proof: bcs.enum('ZKP', { Groth16: bcs.struct('Groth16', { a: Hash, b: bcs.bytes(64), c: Hash }) }),
      exp_horizon_secs: bcs.u64(),
      extra_field: bcs.option(bcs.string()),
      override_aud_val: bcs.option(bcs.string()),
      training_wheels_signature: bcs.option(EphemeralSignature),
    }),
    OpenIdSig: bcs.struct('OpenIdSig', {
      jwt_sig: Bytes,
      jwt_payload_json: bcs.string(),
      uid_key: bcs.string(),
      epk_blinder: Bytes,
      pepper: bcs.bytes(31),
      idc_aud_val: bcs.option(bcs.string()),
    }),
  }),
  jwt_header_json: bcs.string(),
  exp_date_secs: bcs.u64(),
  ephemeral_pubkey: bcs.enum('EphemeralPublicKey', { Ed25519: key('Ed25519'), Secp256r1Ecdsa: key('Secp256r1') }),
  ephemeral_signature: EphemeralSignature,
});
const AnySignature = bcs.enum('AnySignature', {
  Ed25519: signature('Ed25519'),
  Secp256k1Ecdsa: signature('Secp256k1Ecdsa'),
  WebAuthn: bcs.struct('WebAuthn', { signature: Assertion }),
  Keyless: bcs.struct('Keyless', { signature: KeylessSignature }),
  SlhDsa_Sha2_128s: signature('SlhDsa_Sha2_128s'),
});
const keyAndSignature = (name: string) => bcs.struct(name, { public_key: Bytes, signature: Bytes });
const AccountAuthenticator = bcs.enum('AccountAuthenticator', {
  Ed25519: keyAndSignature('Ed25519'),
  MultiEd25519: keyAndSignature('MultiEd25519'),
  SingleKey: bcs.struct('SingleKey', {
    authenticator: bcs.struct('SingleKeyAuthenticator', { public_key: AnyPublicKey, signature: AnySignature }),
  }),
  MultiKey: bcs.struct('MultiKey', {
    authenticator: bcs.struct('MultiKeyAuthenticator', {
      public_keys: bcs.struct('MultiKey', { public_keys: bcs.vector(AnyPublicKey), signatures_required: bcs.u8() }),
      signatures: bcs.vector(AnySignature),
      signatures_bitmap: bcs.struct('BitVec', { inner: Bytes }),
    }),
  }),
  NoAccountAuthenticator: null,
  Abstraction: bcs.struct('Abstraction', {
    function_info: bcs.struct('FunctionInfo', {
      module_address: Address,
      module_name: bcs.string(),
      function_name: bcs.string(),
    }),
    auth_data: bcs.enum('AbstractionAuthData', {
      V1: bcs.struct('V1', { signing_message_digest: Bytes, authenticator: Bytes }),
      DerivableV1: bcs.struct('DerivableV1', {
        signing_message_digest: Bytes,
        abstract_signature: Bytes,
        abstract_public_key: Bytes,
      }),
    }),
  }),
});
const secondary = {
  sender: AccountAuthenticator,
  secondary_signer_addresses: bcs.vector(Address),
  secondary_signers: bcs.vector(AccountAuthenticator),
};
const TransactionAuthenticator = bcs.enum('TransactionAuthenticator', {
  Ed25519: keyAndSignature('Ed25519'),
  MultiEd25519: keyAndSignature('MultiEd25519'),
  MultiAgent: bcs.struct('MultiAgent', secondary),
  FeePayer: bcs.struct('FeePayer', {
    ...secondary,
    fee_payer_address: Address,
    fee_payer_signer: AccountAuthenticator,
  }),
  SingleSender: bcs.struct('SingleSender', { sender: AccountAuthenticator }),
});
export const SignedTransaction = bcs.struct('SignedTransaction', {
  raw_txn: RawTransaction,
  authenticator: TransactionAuthenticator,
});
