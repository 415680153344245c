// The one vocabulary the write index speaks: a dependency id per StateKey, one per
// StateKey's removal, and one per class of writes at an account (any AccessPath,
// any ResourceGroup, any Code).
// A version's write names the ids it changes; a latest read names the ids its
// answer depends on; the answer is still the latest while none of its ids was
// written since it was read.
import type { AccountWrites, StateRead } from '../model/state-read.js';
import type { StateKeyWrite } from '../writes/state-key.js';

/** One state key a version wrote, as the change feed's codec gives it. */
export type WrittenKey = Pick<StateKeyWrite, 'key' | 'kind' | 'address' | 'deleted'>;

/** The writes of one version. */
export interface VersionWrites {
  readonly version: bigint;
  readonly writes: readonly WrittenKey[];
}

// Each id starts with its kind's letter, so a key's bytes never read as a class.
const latin1 = (key: Uint8Array): string => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
const keyId = (key: Uint8Array): string => `k${latin1(key)}`;
/** The key's removal: written only by a deletion, read by an answer that needs the key to exist. */
const removalId = (key: Uint8Array): string => `r${latin1(key)}`;
const ACCOUNT_ID: Readonly<Record<AccountWrites, string>> = { any: 'a', group: 'g', code: 'c' };
const accountId = (writes: AccountWrites, address: string): string => ACCOUNT_ID[writes] + address;
/** Every Code write, wherever it is. */
const ANY_MODULE = 'm';
/** Every Code write at a special address (0x0 to 0xf). */
const FRAMEWORK_MODULE = 'f';
const SPECIAL_ADDRESS = /^0x0{63}[0-9a-f]$/;

/** The ids a write changes: its key's, and the classes at its account it falls in. */
export function idsWrittenBy(write: WrittenKey): string[] {
  const ids = [keyId(write.key)];
  if (write.deleted === true) ids.push(removalId(write.key));
  const address = write.address;
  if (address === undefined) return ids;
  ids.push(accountId('any', address));
  // A path the codec could not read might be a group's or a module's: it counts as both.
  if (write.kind === 'resource_group' || write.kind === 'access_path') ids.push(accountId('group', address));
  if (write.kind === 'code' || write.kind === 'access_path') {
    ids.push(accountId('code', address), ANY_MODULE);
    if (SPECIAL_ADDRESS.test(address)) ids.push(FRAMEWORK_MODULE);
  }
  return ids;
}

/** The ids an answer read as `read` says depends on. */
export function idsReadBy(read: StateRead): string[] {
  const ids = read.keys.map(keyId);
  if (read.existing !== undefined) for (const key of read.existing) ids.push(removalId(key));
  for (const { address, writes } of read.accounts) ids.push(accountId(writes, address));
  if (read.anyModule === true) ids.push(ANY_MODULE);
  if (read.frameworkModules === true) ids.push(FRAMEWORK_MODULE);
  return ids;
}
