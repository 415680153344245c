// The simulated node's only Move module, 0x1::sim: its view functions' signatures,
// their semantics at a ledger version, and the gas each one reports. Pure: tests
// compute expected answers with runSimView / simBalance, without HTTP.
import { SimError } from '../node-error.js';
import { simTypeName, type SimTypeTag } from '../parse/type-tag.js';
import { simHash, simPeriod } from './tables.js';
import { simAddressBytes } from '../parse/address.js';

export const SIM_MODULE_ADDRESS = '0x' + '1'.padStart(64, '0');
export const SIM_MODULE_NAME = 'sim';

/** Move's VM status codes the sim reports in vm_error_code. */
export const VM_ABORTED = 4016;
export const VM_OUT_OF_GAS = 4002;

/** burn(n) runs out of gas above this n. */
const SIM_BURN_LIMIT = 1_000_000n;
/** Balances are below this, so they read like coin amounts. */
const SIM_BALANCE_MODULUS = 1_000_000_000_000n;

export type SimParamType = 'address' | 'u64';
type SimReturnType = 'u64' | 'u128' | 'bool' | '0x1::string::String';
/** A decoded argument: an address is canonical text, a u64 a bigint. */
export type SimArg = string | bigint;

export type SimValue =
  | { type: 'u64' | 'u128'; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: '0x1::string::String'; value: string };

export interface SimFunction {
  name: string;
  isView: boolean;
  isEntry: boolean;
  typeParams: number;
  params: SimParamType[];
  returns: SimReturnType[];
  /** gas units reported in X-…-GAS-USED on success (constant per function) */
  gas: bigint;
  run(args: SimArg[], typeArgs: SimTypeTag[], version: bigint, balanceOf: SimBalanceOf): SimValue[];
}

/** Where balance(owner) reads its answer: the state of the node's write model. */
export type SimBalanceOf = (owner: string, version: bigint) => bigint;

/** balance(owner) at `version` in the period model: changes every 10 versions, below 10^12. */
export function simBalance(owner: string, version: bigint): bigint {
  const hash = simHash(Buffer.from('balance'), simAddressBytes(owner), simPeriod(version));
  return hash.readBigUInt64LE(0) % SIM_BALANCE_MODULUS;
}

const u64 = (value: bigint): SimValue => ({ type: 'u64', value });

function abort(name: string, code: number, status: string): never {
  throw new SimError(400, 'invalid_input', `Move abort in 0x1::sim::${name}: ${status}`, code);
}

const FUNCTIONS: SimFunction[] = [
  {
    name: 'balance',
    isView: true,
    isEntry: false,
    typeParams: 0,
    params: ['address'],
    returns: ['u64'],
    gas: 7n,
    run: ([owner], _t, version, balanceOf) => [u64(balanceOf(owner as string, version))],
  },
  {
    name: 'add',
    isView: true,
    isEntry: false,
    typeParams: 0,
    params: ['u64', 'u64'],
    returns: ['u128'],
    gas: 3n,
    run: ([a, b]) => [{ type: 'u128', value: (a as bigint) + (b as bigint) }],
  },
  {
    name: 'pair',
    isView: true,
    isEntry: false,
    typeParams: 0,
    params: ['u64'],
    returns: ['u64', 'bool'],
    gas: 4n,
    run: ([x]) => [u64((x as bigint) / 2n), { type: 'bool', value: (x as bigint) % 2n === 0n }],
  },
  {
    name: 'type_name',
    isView: true,
    isEntry: false,
    typeParams: 1,
    params: [],
    returns: ['0x1::string::String'],
    gas: 5n,
    run: (_a, [t]) => [{ type: '0x1::string::String', value: simTypeName(t) }],
  },
  {
    name: 'always_abort',
    isView: true,
    isEntry: false,
    typeParams: 0,
    params: [],
    returns: ['u64'],
    gas: 2n,
    run: () => abort('always_abort', VM_ABORTED, 'ABORTED with code 0x1'),
  },
  {
    name: 'burn',
    isView: true,
    isEntry: false,
    typeParams: 0,
    params: ['u64'],
    returns: ['u64'],
    gas: 11n,
    run: ([n]) => ((n as bigint) > SIM_BURN_LIMIT ? abort('burn', VM_OUT_OF_GAS, 'OUT_OF_GAS') : [u64(n as bigint)]),
  },
  {
    // An entry function that is not a view: calling it through /v1/view is refused.
    name: 'poke',
    isView: false,
    isEntry: true,
    typeParams: 0,
    params: [],
    returns: [],
    gas: 1n,
    run: () => [],
  },
];

export const SIM_FUNCTIONS: readonly SimFunction[] = FUNCTIONS;

/** Gas reported per view function (constant, whatever the arguments). */
export const SIM_VIEW_GAS: Readonly<Record<string, bigint>> = Object.fromEntries(
  FUNCTIONS.filter((f) => f.isView).map((f) => [f.name, f.gas]),
);

export function invalidInput(message: string): SimError {
  return new SimError(400, 'invalid_input', message);
}

/**
 * The view function a request names. Unknown module or function, or a function
 * that is not a view: 400 invalid_input with vm_error_code null.
 */
export function findSimView(address: string, module: string, name: string): SimFunction {
  if (address !== SIM_MODULE_ADDRESS || module !== SIM_MODULE_NAME) {
    throw invalidInput(`Module ${address}::${module} not found`);
  }
  const fn = FUNCTIONS.find((f) => f.name === name);
  if (fn === undefined) throw invalidInput(`Function 0x1::sim::${name} not found`);
  if (!fn.isView) throw invalidInput(`Function 0x1::sim::${name} is not a view function`);
  return fn;
}

/** Type-argument and argument counts must match the signature: else 400 invalid_input. */
export function checkSimArity(fn: SimFunction, typeArgCount: number, argCount: number): void {
  if (typeArgCount !== fn.typeParams) {
    throw invalidInput(
      `Wrong number of type arguments for 0x1::sim::${fn.name}: expected ${fn.typeParams}, got ${typeArgCount}`,
    );
  }
  if (argCount !== fn.params.length) {
    throw invalidInput(
      `Wrong number of arguments for 0x1::sim::${fn.name}: expected ${fn.params.length}, got ${argCount}`,
    );
  }
}

/** Runs a view whose arguments are already decoded against fn.params (balances by default the period model's). */
export function runSimView(
  fn: SimFunction,
  typeArgs: SimTypeTag[],
  args: SimArg[],
  version: bigint,
  balanceOf: SimBalanceOf = simBalance,
): SimValue[] {
  checkSimArity(fn, typeArgs.length, args.length);
  return fn.run(args, typeArgs, version, balanceOf);
}
