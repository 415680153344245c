// GET /v1/accounts/0x1/module/sim: the MoveModuleBytecode JSON the Aptos TS SDK
// reads a view function's ABI from before it sends a BCS view request.
import { simHash } from './tables.js';
import { SIM_FUNCTIONS, SIM_MODULE_NAME } from './views.js';

/**
 * Not a loadable module (nothing here runs Move): the Move magic bytes, so it looks
 * like bytecode, then a hash of the module id, so it is stable across runs.
 */
export const SIM_MODULE_BYTECODE: Buffer = Buffer.concat([
  Buffer.from('a11ceb0b07000000', 'hex'),
  simHash(Buffer.from(`0x1::${SIM_MODULE_NAME}`)),
]);

export function simModuleAbi(): Record<string, unknown> {
  return {
    address: '0x1',
    name: SIM_MODULE_NAME,
    friends: [],
    exposed_functions: SIM_FUNCTIONS.map((fn) => ({
      name: fn.name,
      visibility: 'public',
      is_entry: fn.isEntry,
      is_view: fn.isView,
      generic_type_params: Array.from({ length: fn.typeParams }, () => ({ constraints: [] })),
      params: fn.params,
      return: fn.returns,
    })),
    structs: [],
  };
}

export function simModuleJson(): Record<string, unknown> {
  return { bytecode: '0x' + SIM_MODULE_BYTECODE.toString('hex'), abi: simModuleAbi() };
}
