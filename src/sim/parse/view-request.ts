// What POST /v1/view names, as a node reads it:
// - the JSON "function" is an EntryFunctionId: split at the last "::" into a
//   module id and a name, the module id at its first "::" into an address (read
//   by the API contract, docs/api.md §2: see address.ts) and a name; both names
//   must be Move identifiers;
// - a BCS body is a ViewFunction {module: {address, name}, function, ty_args, args},
//   decoded by the bcs crate: canonical ULEB128 lengths of at most 2^31 - 1, UTF-8
//   strings, TypeTag variants 0 to 10, type arguments nested at most 8 deep under
//   the top, and no byte left over. Names are not checked here (a node's Identifier
//   does not check what it deserializes): a name no module has is not found later.
import { parseNodeAddress, simHex } from './address.js';
import { BcsError, BcsInput, bcsTypeTag } from './bcs-input.js';
import { isMoveIdentifier, type SimTypeTag } from './type-tag.js';

export interface SimViewCall {
  address: string;
  module: string;
  function: string;
  typeArgs: SimTypeTag[];
}

/** An entry function id, or null when a node refuses the text. */
export function parseNodeFunctionId(text: string): Omit<SimViewCall, 'typeArgs'> | null {
  const last = text.lastIndexOf('::');
  if (last < 0) return null;
  const moduleId = text.slice(0, last);
  const name = text.slice(last + 2);
  const first = moduleId.indexOf('::');
  if (first < 0) return null;
  const address = parseNodeAddress(moduleId.slice(0, first));
  const module = moduleId.slice(first + 2);
  if (address === null || !isMoveIdentifier(module) || !isMoveIdentifier(name)) return null;
  return { address, module, function: name };
}

/** A BCS ViewFunction and its arguments' bytes, or the bcs crate's reason it does not decode. */
export function decodeNodeViewFunction(
  bytes: Uint8Array,
): { call: SimViewCall; args: Uint8Array[] } | { reason: string } {
  const input = new BcsInput(bytes);
  try {
    const address = simHex(input.bytesOf(32));
    const module = input.string();
    const fn = input.string();
    const typeArgs = input.sequence(() => bcsTypeTag(input, 0));
    const args = input.sequence(() => input.bytesOf(input.length()));
    input.end();
    return { call: { address, module, function: fn, typeArgs }, args };
  } catch (err) {
    if (err instanceof BcsError) return { reason: err.message };
    throw err;
  }
}
