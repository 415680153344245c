// POST /v1/tables/{handle}/item (a table item by its JSON key and types) and POST
// /v1/experimental/state_values/raw (a state value by its BCS StateKey), at
// ?ledger_version=N. Both read the same table as raw_item, so the three agree.
import { SimError } from '../node-error.js';
import { simAnswerFormat } from '../parse/accept.js';
import { parseNodeAddress, parseNodeHexBytes, simAddressBytes, simHex } from '../parse/address.js';
import { parseNodeTypeTag, type SimTypeTag } from '../parse/type-tag.js';
import {
  atLedger,
  isObject,
  jsonBody,
  jsonReply,
  pathParam,
  readVersion,
  reply,
  requestedVersion,
  type SimContext,
  type SimReply,
  type SimRequest,
} from '../reply.js';
import { bcsBytes, bcsString } from '../state/bcs.js';

const BCS = 'application/x-bcs';
const UINT_BYTES: Record<string, number> = { u8: 1, u16: 2, u32: 4, u64: 8, u128: 16, u256: 32 };

function isString(tag: SimTypeTag): boolean {
  return (
    tag.kind === 'struct' && tag.module === 'string' && tag.name === 'String' && tag.address === parseNodeAddress('0x1')
  );
}

/** The BCS bytes of a JSON key of `keyType` (the types the sim supports); null when the key does not match. */
export function simBcsTableKey(keyType: SimTypeTag, key: unknown): Buffer | null {
  const width = UINT_BYTES[keyType.kind];
  if (width !== undefined) {
    const text = typeof key === 'number' && Number.isSafeInteger(key) ? String(key) : key;
    if (typeof text !== 'string' || !/^[0-9]{1,78}$/.test(text)) return null;
    const value = BigInt(text);
    if (value >= 1n << BigInt(width * 8)) return null;
    const out = Buffer.alloc(width);
    for (let i = 0; i < width; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
    return out;
  }
  if (keyType.kind === 'bool') return typeof key === 'boolean' ? Buffer.from([key ? 1 : 0]) : null;
  if (keyType.kind === 'address') {
    const address = typeof key === 'string' ? parseNodeAddress(key) : null;
    return address === null ? null : simAddressBytes(address);
  }
  if (keyType.kind === 'vector' && keyType.of.kind === 'u8') {
    const bytes = typeof key === 'string' ? parseNodeHexBytes(key) : null;
    return bytes === null ? null : bcsBytes(bytes);
  }
  if (isString(keyType)) return typeof key === 'string' ? bcsString(key) : null;
  return null;
}

/** The 8 stored bytes rendered as JSON of `valueType`. */
function valueJson(valueType: SimTypeTag, bytes: Buffer): unknown {
  const value = bytes.readBigUInt64LE(0);
  switch (valueType.kind) {
    case 'u8':
    case 'u16':
    case 'u32':
      return Number(value % (1n << BigInt(UINT_BYTES[valueType.kind] * 8)));
    case 'u64':
    case 'u128':
    case 'u256':
      return String(value);
    case 'bool':
      return (value & 1n) === 1n;
    case 'address':
      return '0x' + bytes.toString('hex').padStart(64, '0');
    default:
      return simHex(bytes);
  }
}

function typeMember(body: Record<string, unknown>, name: string): SimTypeTag {
  const tag = typeof body[name] === 'string' ? parseNodeTypeTag(body[name] as string) : null;
  if (tag === null)
    throw SimError.badRequest(`parse request payload error: ${name}: not a Move type: ${JSON.stringify(body[name])}`);
  return tag;
}

export function handleTableItem(req: SimRequest, ctx: SimContext, rawHandle: string): SimReply {
  const handle = parseNodeAddress(pathParam('table_handle', rawHandle));
  if (handle === null)
    throw SimError.badRequest(`failed to parse path parameter \`table_handle\`: not an address: ${rawHandle}`);
  const requested = requestedVersion(req.query);
  const body = jsonBody(req);
  if (!isObject(body) || !('key' in body))
    throw SimError.badRequest('parse request payload error: expected an object with key_type, value_type and key');
  const keyType = typeMember(body, 'key_type');
  const valueType = typeMember(body, 'value_type');
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    // A key that does not match its type is found out after the version check: 400 with ledger headers.
    const key = simBcsTableKey(keyType, body.key);
    if (key === null)
      throw new SimError(
        400,
        'invalid_input',
        `Failed to parse key ${JSON.stringify(body.key)} as ${body.key_type as string}`,
      );
    const value = ctx.state.tableItem(handle, key, version);
    if (value === null) {
      throw new SimError(
        404,
        'table_item_not_found',
        `Table Item not found by Table handle(${handle}), Table key(${JSON.stringify(body.key)}) and Ledger version(${version})`,
      );
    }
    if (simAnswerFormat(req.headers.accept) === 'bcs') return reply(200, BCS, value);
    return jsonReply(200, valueJson(valueType, value));
  });
}

export function handleStateValue(req: SimRequest, ctx: SimContext): SimReply {
  const requested = requestedVersion(req.query);
  const body = jsonBody(req);
  const key = isObject(body) && typeof body.key === 'string' ? parseNodeHexBytes(body.key) : null;
  if (key === null) throw SimError.badRequest('parse request payload error: expected {"key": hex of a BCS StateKey}');
  if (simAnswerFormat(req.headers.accept) !== 'bcs')
    throw new SimError(403, 'api_disabled', 'Only BCS is supported as an AcceptType.');
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    // A real node's surprise: a key that does not decode is a 500 (thrown by the state), not a 400.
    const value = ctx.state.stateValue(key, version);
    if (value === null)
      throw new SimError(
        404,
        'state_value_not_found',
        `State value not found by State key(${simHex(key)}) and Ledger version(${version})`,
      );
    return reply(200, BCS, value);
  });
}
