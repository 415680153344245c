// Which state a covered route's latest answer is read from (SPEC-feed rule 5),
// as aptos-core's handlers read it (api/src/state.rs, accounts.rs, convert.rs):
// - raw_item, state_values/raw, module: their one key;
// - an account: its 0x1::account::Account, and the Features resource (an account
//   without one is answered a default account, or 404, by a feature flag);
// - a resource T at a: Resource(T) at a; any resource group at a, since the
//   member a group holds is not known; T's module, whose metadata says whether T
//   is a group's member; the Features resource (it decides how modules load);
// - a list of resources: any AccessPath write at a; every module (groups are
//   expanded by their modules' metadata); the Features resource;
// - a list of modules: any Code write at a.
// Older nodes answer account_not_found for a resource, a module or a list of an
// account that does not exist: their answers need the Account resource to exist.
// A 200 says it did (or the node does not check), so only its removal changes them;
// its value does not.
// A 404 (the route's deterministic not-found: the state is absent) reads the same
// state, and the keys a 200 needs to exist are read whole: their creation changes it
// too. Its message names the version it read at ("… and Ledger version(N)"), which
// the judge restates at L (freshness/not-found.ts). Nothing else is judged.
// A JSON rendering reads the definition of every type it shows (its field names),
// nested field types included. A published struct's fields never change (an
// upgrade must keep every field's name and type, in order: move-binary-format's
// compatibility check, which Aptos always runs), so a rendering changes only with
// a module at an address the tag names (SPEC-feed rule 5) and, to be safe, with
// a framework module (0x0 to 0xf: the nested types of most resources, changed only
// by governance, whose write sets bypass the check).
import type { ReplayedAnswer, ReadRequest } from '../model/read.js';
import type { StateRead, StateTarget } from '../model/state-read.js';
import { parseTypeTag, type TypeTag } from '../wire/move-type.js';
import { encodeStateKey } from '../writes/state-key.js';

type StructTag = Extract<TypeTag, { kind: 'struct' }>;

const FRAMEWORK = `0x${'0'.repeat(63)}1`;
const structTag = (text: string): StructTag | null => {
  const tag = parseTypeTag(text);
  return tag !== null && tag.kind === 'struct' ? tag : null;
};
const resourceKey = (address: string, tag: StructTag): Uint8Array => encodeStateKey({ kind: 'resource', address, tag });
const ACCOUNT = structTag('0x1::account::Account')!;
const FEATURES_KEY = resourceKey(FRAMEWORK, structTag('0x1::features::Features')!);

/** Every address a type tag names: its own and its type arguments', once each. */
function addressesOf(tag: TypeTag, into = new Set<string>()): Set<string> {
  if (tag.kind === 'vector') addressesOf(tag.of, into);
  if (tag.kind === 'struct') {
    into.add(tag.address);
    for (const arg of tag.typeArgs) addressesOf(arg, into);
  }
  return into;
}

/** The route descriptors' stateRead: what the answer to `req` reads, from what its parse named. */
export function stateReadOf(req: ReadRequest, answer: ReplayedAnswer): StateRead | null {
  const target = req.target;
  if (target === undefined || (answer.status !== 200 && answer.status !== 404)) return null;
  const read = readOf(target, req.format === 'json');
  if (read === null || answer.status === 200 || read.existing === undefined) return read;
  return { ...read, keys: [...read.keys, ...read.existing], existing: undefined };
}

/** What a 200 to a request for `target` reads. */
function readOf(target: StateTarget, json: boolean): StateRead | null {
  switch (target.kind) {
    case 'table_item':
      return { keys: [encodeStateKey({ kind: 'table_item', handle: target.handle, key: target.key })], accounts: [] };
    case 'state_key':
      return { keys: [target.key], accounts: [] };
    case 'account':
      return { keys: [resourceKey(target.address, ACCOUNT), FEATURES_KEY], accounts: [] };
    case 'resource': {
      const tag = structTag(target.tag);
      if (tag === null) return null;
      const module = encodeStateKey({ kind: 'code', address: tag.address, module: tag.module });
      const accounts: StateRead['accounts'][number][] = [{ address: target.address, writes: 'group' }];
      if (json) for (const address of addressesOf(tag)) accounts.push({ address, writes: 'code' });
      return {
        keys: [resourceKey(target.address, tag), module, FEATURES_KEY],
        existing: [resourceKey(target.address, ACCOUNT)],
        accounts,
        frameworkModules: json,
      };
    }
    case 'resources':
      return { keys: [FEATURES_KEY], accounts: [{ address: target.address, writes: 'any' }], anyModule: true };
    case 'module': {
      const module = encodeStateKey({ kind: 'code', address: target.address, module: target.name });
      return { keys: [module], existing: [resourceKey(target.address, ACCOUNT)], accounts: [] };
    }
    case 'modules':
      return {
        keys: [],
        existing: [resourceKey(target.address, ACCOUNT)],
        accounts: [{ address: target.address, writes: 'code' }],
      };
  }
}
