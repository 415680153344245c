// POST /v1/tables/{handle}/item and POST /v1/experimental/state_values/raw: state
// items read at ?ledger_version=N by a JSON body (api.md §9). raw_item,
// the BCS form of a table item, is in parse-read.ts.
import { NodeError } from '../errors.js';
import { parseHexBytes } from '../wire/hex.js';
import { formatTypeTag, parseTypeTag } from '../wire/move-type.js';
import type { ReadRequest } from '../model/read.js';
import {
  addressParam,
  answerFormat,
  BCS_TYPE,
  JSON_TYPE,
  ledgerVersion,
  requireBcsAnswer,
  requireJsonBody,
  withQuery,
} from './params.js';
import { type JsonObjectBody, parseJsonObject } from './parse-read.js';
import { BY_LEDGER_VERSION, type RawRead, type RouteDescriptor } from './route.js';
import { stateReadOf } from './state-reads.js';

const FAMILY = 'tables';

function jsonBody(raw: RawRead, route: string): JsonObjectBody {
  requireJsonBody(raw, route);
  return parseJsonObject(raw.body);
}

/** A member that must be a Move type string, in its canonical form. */
function typeMember(json: JsonObjectBody, name: string): string {
  const text = json.member(name);
  const tag = typeof text === 'string' ? parseTypeTag(text) : null;
  if (tag === null)
    throw NodeError.badRequest(
      `parse request payload error: "${name}" must be a Move type, got ${JSON.stringify(json.written(name))}`,
    );
  return formatTypeTag(tag);
}

const tableItem: RouteDescriptor = {
  name: 'table_item',
  family: FAMILY,
  ...BY_LEDGER_VERSION,
  deterministic404: ['table_item_not_found'],
  method: 'POST',
  url: '/v1/tables/:table_handle/item',
  parse(raw: RawRead): ReadRequest {
    const handle = addressParam(raw, 'table_handle');
    const version = ledgerVersion(raw);
    const json = jsonBody(raw, 'tables/item');
    const keyType = typeMember(json, 'key_type');
    const valueType = typeMember(json, 'value_type');
    // The key is any JSON value; a node checks it against key_type after its version check.
    const key = json.members.get('key');
    if (key === undefined) throw NodeError.badRequest('parse request payload error: missing member "key"');
    const { format, accept } = answerFormat(raw);
    return {
      route: tableItem,
      version,
      format,
      // Members a node ignores are not in it (serde without deny_unknown_fields).
      identity: `${handle}\n${keyType}\n${valueType}\n${key}`,
      method: 'POST',
      path: withQuery(`/v1/tables/${handle}/item`, [['ledger_version', version ?? undefined]]).path,
      body: raw.body,
      contentType: JSON_TYPE,
      accept,
    };
  },
};

const stateValue: RouteDescriptor = {
  name: 'state_value',
  family: FAMILY,
  ...BY_LEDGER_VERSION,
  deterministic404: ['state_value_not_found'],
  stateRead: stateReadOf,
  method: 'POST',
  url: '/v1/experimental/state_values/raw',
  parse(raw: RawRead): ReadRequest {
    const version = ledgerVersion(raw);
    const json = jsonBody(raw, 'state_values/raw');
    const asked = json.member('key');
    const key = typeof asked === 'string' ? parseHexBytes(asked) : null;
    if (key === null) {
      throw NodeError.badRequest(
        `parse request payload error: "key" must be the BCS-serialized state key as hex, got ${JSON.stringify(json.written('key'))}`,
      );
    }
    // BCS only, as raw_item.
    requireBcsAnswer(raw);
    return {
      route: stateValue,
      version,
      format: 'bcs',
      identity: key.toString('hex'),
      method: 'POST',
      path: withQuery('/v1/experimental/state_values/raw', [['ledger_version', version ?? undefined]]).path,
      body: raw.body,
      contentType: JSON_TYPE,
      accept: BCS_TYPE,
      target: { kind: 'state_key', key },
    };
  },
};

export const tableRoutes: readonly RouteDescriptor[] = [tableItem, stateValue];
