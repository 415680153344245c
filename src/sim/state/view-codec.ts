// View arguments in (JSON values or BCS bytes) and return values out (a JSON array
// or uleb128(count) ‖ each value's BCS), for the few Move types 0x1::sim uses.
import { bcs } from '@mysten/bcs';
import { parseNodeAddress, simHex } from '../parse/address.js';
import { parseNodeU64, SIM_U64_MAX } from '../parse/u64.js';
import { invalidInput, type SimArg, type SimParamType, type SimValue } from './views.js';

function badArg(index: number, type: SimParamType): never {
  throw invalidInput(`Invalid argument ${index}: expected ${type}`);
}

/** A JSON argument: an address as hex text, a u64 as a decimal string or a JSON integer. */
export function decodeJsonArg(type: SimParamType, value: unknown, index: number): SimArg {
  if (type === 'address') {
    const address = typeof value === 'string' ? parseNodeAddress(value) : null;
    return address ?? badArg(index, type);
  }
  if (typeof value === 'string') return parseNodeU64(value) ?? badArg(index, type);
  // JSON.parse has already rounded integers above 2^53, so only safe ones are exact.
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return badArg(index, type);
}

/** A BCS argument: an address is 32 bytes, a u64 8 bytes little-endian; any other size is refused. */
export function decodeBcsArg(type: SimParamType, bytes: Uint8Array, index: number): SimArg {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type === 'address') return buf.length === 32 ? simHex(buf) : badArg(index, type);
  return buf.length === 8 ? buf.readBigUInt64LE(0) : badArg(index, type);
}

/** The JSON answer: u64/u128 as strings, bool as bool, String as string. */
export function encodeJsonValues(values: SimValue[]): Buffer {
  return Buffer.from(JSON.stringify(values.map((v) => (typeof v.value === 'bigint' ? v.value.toString() : v.value))));
}

function bcsValue(v: SimValue): Uint8Array {
  switch (v.type) {
    case 'u64':
      return bcs
        .u64()
        .serialize(v.value & SIM_U64_MAX)
        .toBytes();
    case 'u128':
      return bcs.u128().serialize(v.value).toBytes();
    case 'bool':
      return bcs.bool().serialize(v.value).toBytes();
    case '0x1::string::String':
      return bcs.string().serialize(v.value).toBytes();
  }
}

/** The BCS answer (api.md §3): uleb128(count) followed by each value's BCS bytes. */
export function encodeBcsValues(values: SimValue[]): Buffer {
  return Buffer.concat([bcs.uleb128().serialize(values.length).toBytes(), ...values.map(bcsValue)]);
}
