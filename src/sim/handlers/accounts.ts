// GET /v1/accounts/{address}[/resources|/resource/{tag}|/modules|/module/{name}|/balance/{asset}]:
// account state at ?ledger_version=N (api.md §9). Path and query errors
// come first, without ledger headers; then the version check; then the lookup.
import { SimError } from '../node-error.js';
import { simAnswerFormat } from '../parse/accept.js';
import { parseNodeAddress } from '../parse/address.js';
import { isMoveIdentifier } from '../parse/type-tag.js';
import { bcsU64 } from '../state/bcs.js';
import { pageLimit } from '../state/pages.js';
import { simCanonicalStruct as canonicalStruct } from '../state/state-view.js';
import {
  atLedger,
  jsonReply,
  pathParam,
  readVersion,
  reply,
  requestedVersion,
  type SimContext,
  type SimReply,
  type SimRequest,
} from '../reply.js';

const BCS = 'application/x-bcs';

function addressOf(raw: string): string {
  const address = parseNodeAddress(pathParam('address', raw));
  if (address === null) throw SimError.badRequest(`failed to parse path parameter \`address\`: not an address: ${raw}`);
  return address;
}

function accountNotFound(address: string, version: bigint): SimError {
  return new SimError(
    404,
    'account_not_found',
    `Account not found by Address(${address}) and Ledger version(${version})`,
  );
}

export function handleAccount(req: SimRequest, ctx: SimContext, rawAddress: string): SimReply {
  const address = addressOf(rawAddress);
  const requested = requestedVersion(req.query);
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const account = ctx.state.account(address, version);
    if (account === null && !ctx.statelessAccounts) throw accountNotFound(address, version);
    // A missing account is a stateless one (sequence number 0) where the feature is on.
    const sequence = account?.sequenceNumber ?? 0n;
    const authKey = account?.authenticationKey ?? address;
    if (simAnswerFormat(req.headers.accept) === 'bcs') {
      const stateless = Buffer.concat([Buffer.from([32]), Buffer.from(address.slice(2), 'hex'), bcsU64(0n)]);
      return reply(200, BCS, account?.bcs ?? stateless);
    }
    return jsonReply(200, { sequence_number: String(sequence), authentication_key: authKey });
  });
}

/** /resources and /modules: a page of the account's list; a missing account is 404 (as older nodes answer). */
export function handleList(
  req: SimRequest,
  ctx: SimContext,
  rawAddress: string,
  list: 'resources' | 'modules',
): SimReply {
  const address = addressOf(rawAddress);
  const requested = requestedVersion(req.query);
  const limit = pageLimit(req.query);
  const start = req.query.get('start');
  ctx.state.checkCursor(address, start);
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    if (!ctx.state.accountExists(address, version)) throw accountNotFound(address, version);
    const page = ctx.state.listPage(address, list, version, { start, limit, maxPageSize: ctx.maxPageSize });
    const headers: Record<string, string> = page.cursor === undefined ? {} : { [ctx.headerNames.cursor]: page.cursor };
    if (simAnswerFormat(req.headers.accept) === 'bcs') return reply(200, BCS, page.bcs, headers);
    return reply(200, 'application/json', Buffer.from(JSON.stringify(page.json)), headers);
  });
}

export function handleResource(req: SimRequest, ctx: SimContext, rawAddress: string, rawTag: string): SimReply {
  const address = addressOf(rawAddress);
  const text = pathParam('resource_type', rawTag);
  const wanted = canonicalStruct(text);
  if (wanted === null)
    throw SimError.badRequest(`failed to parse path parameter \`resource_type\`: not a struct tag: ${text}`);
  const requested = requestedVersion(req.query);
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const found = ctx.state.resource(address, wanted, version);
    if (found === undefined) {
      throw new SimError(
        404,
        'resource_not_found',
        `Resource not found by Address(${address}), Struct tag(${wanted}) and Ledger version(${version})`,
      );
    }
    if (simAnswerFormat(req.headers.accept) === 'bcs') return reply(200, BCS, found.bytes);
    return jsonReply(200, { type: found.type, data: found.data });
  });
}

export function handleModule(req: SimRequest, ctx: SimContext, rawAddress: string, rawName: string): SimReply {
  const address = addressOf(rawAddress);
  const name = pathParam('module_name', rawName);
  if (!isMoveIdentifier(name))
    throw SimError.badRequest(`failed to parse path parameter \`module_name\`: not an identifier: ${rawName}`);
  const requested = requestedVersion(req.query);
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const found = ctx.state.module(address, name, version);
    if (found === undefined) {
      throw new SimError(
        404,
        'module_not_found',
        `Module not found by Address(${address}), Module name(${name}) and Ledger version(${version})`,
      );
    }
    if (simAnswerFormat(req.headers.accept) === 'bcs') return reply(200, BCS, found.bytecode);
    return jsonReply(200, { bytecode: '0x' + found.bytecode.toString('hex'), abi: found.abi });
  });
}

/** No existence check on a node: an absent balance is 0. JSON is a bare number. */
export function handleBalance(req: SimRequest, ctx: SimContext, rawAddress: string, rawAsset: string): SimReply {
  const address = addressOf(rawAddress);
  const text = pathParam('asset_type', rawAsset);
  const asset = parseNodeAddress(text) ?? canonicalStruct(text);
  if (asset === null)
    throw SimError.badRequest(`failed to parse path parameter \`asset_type\`: not a coin type or an address: ${text}`);
  const requested = requestedVersion(req.query);
  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    const balance = ctx.state.balance(address, asset, version);
    if (simAnswerFormat(req.headers.accept) === 'bcs') {
      return reply(200, BCS, bcsU64(balance));
    }
    return reply(200, 'application/json', Buffer.from(String(balance)));
  });
}
