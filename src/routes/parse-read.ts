// POST /v1/tables/{handle}/raw_item and POST /v1/view, the two seed routes, and
// the JSON body parsing every POST route shares. Everything a node would refuse is
// refused here, so that invalid input never reaches a node (api.md §3, §7).
import { NodeError } from '../errors.js';
import { acceptFormat } from '../wire/accept.js';
import { canonicalMembers, JSON_WHITESPACE, JsonSyntaxError } from '../wire/canonical-json.js';
import { parseEntryFunctionId } from '../wire/function-id.js';
import { parseHexBytes } from '../wire/hex.js';
import { mediaType } from '../wire/media-type.js';
import { formatTypeTag, parseTypeTag } from '../wire/move-type.js';
import type { ReadRequest, ReadRoute } from '../model/read.js';
import { decodeViewRequest } from '../wire/view-bcs.js';
import type { VendorNames } from '../wire/vendor.js';
import {
  addressParam,
  BCS_TYPE,
  JSON_TYPE,
  ledgerVersion,
  requireBcsAnswer,
  requireJsonBody,
  withQuery,
} from './params.js';
import { BY_LEDGER_VERSION, type RawRead, type RouteDescriptor } from './route.js';
import { stateReadOf } from './state-reads.js';

export const RAW_ITEM_ROUTE: ReadRoute = {
  name: 'raw_item',
  family: 'raw_item',
  ...BY_LEDGER_VERSION,
  deterministic404: ['table_item_not_found'],
  stateRead: stateReadOf,
};
// A view that aborts is a 400 invalid_input: a fact about the function at N.
export const VIEW_ROUTE: ReadRoute = {
  name: 'view',
  family: 'view',
  ...BY_LEDGER_VERSION,
  deterministic404: [],
  cachesInvalidInput: true,
};

// Strict: toString('utf8') would turn invalid bytes into U+FFFD, so a body a node
// refuses (serde_json validates UTF-8) would share a cache identity with a valid one.
// A BOM is kept, so it fails as JSON, as on a node.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A JSON object body, parsed once (by the canonical parser): each member's
 * canonical text, and its value read from that text alone.
 */
export class JsonObjectBody {
  constructor(
    private readonly text: string,
    /** each member's canonical JSON text */
    readonly members: Map<string, string>,
  ) {}

  /** A member's value, read from its canonical text (undefined when it is absent): the body is not parsed again. */
  member(name: string): unknown {
    const text = this.members.get(name);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /** A member as the client wrote it (its object members in their order), for a refusal that quotes it. */
  written(name: string): unknown {
    return (JSON.parse(this.text) as Record<string, unknown>)[name];
  }
}

export function parseJsonObject(body: Buffer): JsonObjectBody {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw NodeError.badRequest('parse request payload error: the JSON body is not valid UTF-8');
  }
  let members: Map<string, string> | null;
  try {
    members = canonicalMembers(text);
  } catch (err) {
    const reason = err instanceof JsonSyntaxError ? err.message : 'malformed';
    throw NodeError.badRequest(`parse request payload error: malformed JSON body (${reason})`);
  }
  if (members === null) throw NodeError.badRequest('parse request payload error: the JSON body must be an object');
  return new JsonObjectBody(text, members);
}

/**
 * The common body, `{"key":"0x…"}` in ASCII with nothing else: one regex instead
 * of the full parser (a hot path). It has a single member, so no duplicate can
 * hide in it; anything else takes the full parse.
 */
const WS = `${JSON_WHITESPACE}*`;
const SIMPLE_KEY_BODY = new RegExp(`^${WS}\\{${WS}"key"${WS}:${WS}"((?:0x)?(?:[0-9a-fA-F]{2})*)"${WS}\\}${WS}$`);

/** The raw_item body's key bytes; 400 for anything else. */
function rawItemKey(body: Buffer): Buffer {
  const simple = SIMPLE_KEY_BODY.exec(body.toString('latin1'));
  if (simple !== null) return parseHexBytes(simple[1])!;
  const key = parseJsonObject(body).member('key');
  if (typeof key !== 'string') {
    throw NodeError.badRequest(
      'parse request payload error: missing string member "key" (the BCS-serialized key as hex)',
    );
  }
  const bytes = parseHexBytes(key);
  if (bytes === null) {
    throw NodeError.badRequest(`parse request payload error: "key" is not hex bytes: ${JSON.stringify(key)}`);
  }
  return bytes;
}

export function parseRawItem(raw: RawRead): ReadRequest {
  const handle = addressParam(raw, 'table_handle');
  const version = ledgerVersion(raw);
  requireJsonBody(raw, 'raw_item');
  const key = rawItemKey(raw.body);
  // Checked after the input is parsed, as a node does: parse errors win over 403.
  requireBcsAnswer(raw);
  return {
    route: RAW_ITEM_ROUTE,
    version,
    format: 'bcs',
    identity: `${handle}\n${key.toString('hex')}`,
    method: 'POST',
    path: withQuery(`/v1/tables/${handle}/raw_item`, [['ledger_version', version ?? undefined]]).path,
    body: raw.body,
    contentType: JSON_TYPE,
    accept: BCS_TYPE,
    target: { kind: 'table_item', handle, key },
  };
}

export function parseView(raw: RawRead, vendor: VendorNames): ReadRequest {
  const version = ledgerVersion(raw);
  const format = acceptFormat(raw.accept);
  const type = mediaType(raw.contentType);
  let identity: string;
  let refusedAtLedger: string | undefined;
  if (type === vendor.viewBcsMediaType) {
    identity = `bcs\n${raw.body.toString('hex')}`;
    // A node takes any bytes here and decodes them in its handler, after reading its ledger.
    const { reason } = decodeViewRequest(raw.body);
    if (reason !== undefined) refusedAtLedger = `Failed to deserialize input into ViewRequest: ${reason}`;
  } else if (type === JSON_TYPE) {
    identity = jsonViewIdentity(raw.body);
  } else {
    throw NodeError.badRequest(
      `unsupported content type '${raw.contentType ?? 'none'}': view takes ${JSON_TYPE} or ${vendor.viewBcsMediaType}`,
    );
  }
  // One literal with every field, as parseRawItem makes its read, not a spread of
  // the common fields with the rest added: each such object has a hidden class of
  // its own (model/read.ts, EveryField, says why), and a hit of a cached spelling
  // reads its fields, one it lacks (refusedAtLedger) among them.
  const read: ReadRequest = {
    route: VIEW_ROUTE,
    version,
    format,
    identity,
    method: 'POST',
    path: withQuery('/v1/view', [['ledger_version', version ?? undefined]]).path,
    body: raw.body,
    contentType: type === JSON_TYPE ? JSON_TYPE : vendor.viewBcsMediaType,
    accept: format === 'bcs' ? BCS_TYPE : JSON_TYPE,
  };
  if (refusedAtLedger !== undefined) read.refusedAtLedger = refusedAtLedger;
  return read;
}

/** A JSON view body's identity: its function and types in their long forms, the rest as canonical JSON; 400 for a body a node refuses. */
function jsonViewIdentity(body: Buffer): string {
  const json = parseJsonObject(body);
  const members = json.members;
  const named = json.member('function');
  const fn = typeof named === 'string' ? parseEntryFunctionId(named) : null;
  if (fn === null) {
    throw NodeError.badRequest(
      `parse request payload error: "function" must be an entry function id {address}::{module}::{function}, got ${JSON.stringify(json.written('function'))}`,
    );
  }
  const types = json.member('type_arguments');
  if (!Array.isArray(types)) {
    throw NodeError.badRequest('parse request payload error: "type_arguments" must be an array of Move types');
  }
  const typeArgs = types.map((t) => (typeof t === 'string' ? parseTypeTag(t) : null));
  const badType = typeArgs.indexOf(null);
  if (badType >= 0) {
    const written = json.written('type_arguments') as unknown[];
    throw NodeError.badRequest(
      `parse request payload error: type_arguments[${badType}] is not a Move type: ${JSON.stringify(written[badType])}`,
    );
  }
  // Only its kind matters here: the canonical text of an array starts with its bracket.
  if (members.get('arguments')?.[0] !== '[') {
    throw NodeError.badRequest('parse request payload error: "arguments" must be an array');
  }
  // Canonical: the function and types in their long forms, the arguments with
  // members sorted and numbers as written, other members as canonical JSON.
  const rest = [...members].filter(([k]) => k !== 'function' && k !== 'type_arguments');
  return [
    'json',
    `${fn.address}::${fn.module}::${fn.name}`,
    typeArgs.map((t) => formatTypeTag(t!)).join(','),
    ...rest.map(([k, v]) => `${JSON.stringify(k)}:${v}`),
  ].join('\n');
}

export function rawItemRoute(): RouteDescriptor {
  return { ...RAW_ITEM_ROUTE, method: 'POST', url: '/v1/tables/:table_handle/raw_item', parse: parseRawItem };
}

export function viewRoute(vendor: VendorNames): RouteDescriptor {
  return { ...VIEW_ROUTE, method: 'POST', url: '/v1/view', parse: (raw) => parseView(raw, vendor) };
}
