// The ledger's hashes of its values (aptos-crypto's hash.rs, CryptoHasher): SHA3-256 of
// a seed, SHA3-256("APTOS::" + the type's name), followed by the value's exact BCS bytes.
import { createHash, type Hash } from 'node:crypto';

const seedOf = (typeName: string): Buffer => createHash('sha3-256').update(`APTOS::${typeName}`).digest();

const TRANSACTION_SEED = seedOf('Transaction');
const WRITE_SET_SEED = seedOf('WriteSet');
const STATE_KEY_SEED = seedOf('StateKey');

function salted(seed: Buffer, bytes: Uint8Array, start: number, end: number): Buffer {
  return createHash('sha3-256').update(seed).update(bytes.subarray(start, end)).digest();
}

/** The hash of the Transaction whose BCS bytes are bytes[start, end): info.transaction_hash. */
export function transactionHash(bytes: Uint8Array, start = 0, end = bytes.length): Buffer {
  return salted(TRANSACTION_SEED, bytes, start, end);
}

/** The hash of the WriteSet whose BCS bytes are bytes[start, end): info.state_change_hash. */
export function writeSetHash(bytes: Uint8Array, start = 0, end = bytes.length): Buffer {
  return salted(WRITE_SET_SEED, bytes, start, end);
}

/**
 * The hash of a StateKey given in its storage encoding (StateKeyInner::encode, which is what
 * the node hashes for a state_key_hash: not the key's BCS for every kind; state-key.ts turns one
 * into the other).
 */
export function stateKeyEncodingHash(encoded: Uint8Array): Buffer {
  return salted(STATE_KEY_SEED, encoded, 0, encoded.length);
}

/** A Transaction hash fed a byte range at a time, read at any point: the search for where one ends. */
export function transactionHasher(): Hash {
  return createHash('sha3-256').update(TRANSACTION_SEED);
}

/** Whether the 32 bytes of `hash` are bytes[at, at + 32). */
export function hashAt(hash: Uint8Array, bytes: Uint8Array, at: number): boolean {
  if (at + 32 > bytes.length) return false;
  for (let i = 0; i < 32; i++) if (hash[i] !== bytes[at + i]) return false;
  return true;
}
