// POST /v1/tables/{handle}/raw_item (api.md §3): BCS answers only, items from the state's tables.
import { SimError } from '../node-error.js';
import { simAnswerFormat } from '../parse/accept.js';
import { parseNodeAddress, parseNodeHexBytes, simHex } from '../parse/address.js';
import {
  atLedger,
  isObject,
  jsonBody,
  pathParam,
  readVersion,
  reply,
  requestedVersion,
  type SimContext,
  type SimReply,
  type SimRequest,
} from '../reply.js';

export function handleRawItem(req: SimRequest, ctx: SimContext, rawHandle: string): SimReply {
  // Everything a node checks while extracting the request comes first, without ledger headers.
  const handle = parseNodeAddress(pathParam('table_handle', rawHandle));
  if (handle === null)
    throw SimError.badRequest(`failed to parse path parameter \`table_handle\`: not an address: ${rawHandle}`);
  const requested = requestedVersion(req.query);
  const body = jsonBody(req);
  if (!isObject(body) || typeof body.key !== 'string') {
    throw SimError.badRequest('parse request payload error: expected an object with a string member "key"');
  }
  const key = parseNodeHexBytes(body.key);
  if (key === null)
    throw SimError.badRequest(`parse request payload error: "key" is not hex bytes: ${JSON.stringify(body.key)}`);
  if (simAnswerFormat(req.headers.accept) !== 'bcs') {
    throw new SimError(403, 'api_disabled', 'Only BCS is supported as an AcceptType.');
  }

  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const value = ctx.state.tableItem(handle, key, version);
    if (value === null) {
      throw new SimError(
        404,
        'table_item_not_found',
        `Table Item not found by Table handle(${handle}), Table key(${simHex(key)}) and Ledger version(${version})`,
      );
    }
    return reply(200, 'application/x-bcs', value);
  });
}
