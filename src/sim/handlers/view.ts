// POST /v1/view (api.md §3): a JSON or BCS request for a 0x1::sim view function,
// answered as a JSON array or as BCS, with the gas-used header on success. A JSON
// body is parsed as the request is extracted; a BCS body is decoded by the
// handler after it read its ledger, as a node does (view_function.rs): one that
// does not decode is a 400 invalid_input with the ledger headers.
import { SimError } from '../node-error.js';
import { simAnswerFormat, simMediaType } from '../parse/accept.js';
import { parseNodeTypeTag } from '../parse/type-tag.js';
import { decodeNodeViewFunction, parseNodeFunctionId, type SimViewCall } from '../parse/view-request.js';
import {
  atLedger,
  isObject,
  jsonBody,
  readVersion,
  reply,
  requestedVersion,
  type SimContext,
  type SimReply,
  type SimRequest,
} from '../reply.js';
import { decodeBcsArg, decodeJsonArg, encodeBcsValues, encodeJsonValues } from '../state/view-codec.js';
import { checkSimArity, findSimView, runSimView, type SimArg } from '../state/views.js';

interface ViewCall extends SimViewCall {
  args: { json: unknown[] } | { bcs: Uint8Array[] };
}

function malformed(detail: string): SimError {
  return SimError.badRequest(`parse request payload error: ${detail}`);
}

function parseJsonCall(req: SimRequest): ViewCall {
  const body = jsonBody(req);
  if (!isObject(body)) throw malformed('expected a JSON object');
  const { function: fnText, type_arguments: typeArgTexts, arguments: args } = body;
  if (typeof fnText !== 'string') throw malformed('"function" must be a string');
  if (!Array.isArray(typeArgTexts)) throw malformed('"type_arguments" must be an array');
  if (!Array.isArray(args)) throw malformed('"arguments" must be an array');
  const id = parseNodeFunctionId(fnText);
  if (id === null) throw malformed(`"function" is not an entry function id: ${JSON.stringify(fnText)}`);
  const typeArgs = typeArgTexts.map((text) => {
    const tag = typeof text === 'string' ? parseNodeTypeTag(text) : null;
    if (tag === null) throw malformed(`"type_arguments" has an invalid Move type: ${JSON.stringify(text)}`);
    return tag;
  });
  return { ...id, typeArgs, args: { json: args } };
}

/** A BCS body, decoded once the ledger is read. */
function decodeBcsCall(body: Buffer): ViewCall {
  const decoded = decodeNodeViewFunction(body);
  if ('reason' in decoded)
    throw new SimError(400, 'invalid_input', `Failed to deserialize input into ViewRequest: ${decoded.reason}`);
  return { ...decoded.call, args: { bcs: decoded.args } };
}

function parseCall(req: SimRequest, ctx: SimContext): ViewCall | { bcsBody: Buffer } {
  const type = simMediaType(req.headers['content-type']);
  if (type === 'application/json') return parseJsonCall(req);
  if (type === ctx.names.viewBcsMediaType) return { bcsBody: req.body };
  throw SimError.badRequest(
    `unsupported content type ${JSON.stringify(req.headers['content-type'] ?? '')}, expected application/json or ${ctx.names.viewBcsMediaType}`,
  );
}

export function handleView(req: SimRequest, ctx: SimContext): SimReply {
  const requested = requestedVersion(req.query);
  const parsed = parseCall(req, ctx);
  const format = simAnswerFormat(req.headers.accept);

  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const call = 'bcsBody' in parsed ? decodeBcsCall(parsed.bcsBody) : parsed;
    const fn = findSimView(call.address, call.module, call.function);
    const raw = 'json' in call.args ? call.args.json : call.args.bcs;
    checkSimArity(fn, call.typeArgs.length, raw.length);
    const args: SimArg[] =
      'json' in call.args
        ? call.args.json.map((value, i) => decodeJsonArg(fn.params[i], value, i))
        : call.args.bcs.map((bytes, i) => decodeBcsArg(fn.params[i], bytes, i));
    const values = runSimView(fn, call.typeArgs, args, version, (owner, at) => ctx.state.viewBalance(owner, at));
    const gas = { [ctx.headerNames.gasUsed]: fn.gas.toString() };
    return format === 'bcs'
      ? reply(200, 'application/x-bcs', encodeBcsValues(values), gas)
      : reply(200, 'application/json', encodeJsonValues(values), gas);
  });
}
