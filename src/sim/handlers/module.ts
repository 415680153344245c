// GET /v1/accounts/{address}/module/{name}: the ABI of 0x1::sim (JSON), or its
// bytecode when Accept selects BCS; any other module is 404 module_not_found.
import { NodeError } from '../../errors.js';
import { acceptFormat } from '../../wire/accept.js';
import { parseAddress } from '../../wire/address.js';
import { isIdentifier } from '../../wire/function-id.js';
import { SIM_MODULE_BYTECODE, simModuleJson } from '../abi.js';
import { atLedger, jsonReply, pathParam, readVersion, reply, requestedVersion, type SimContext, type SimReply, type SimRequest } from '../reply.js';
import { SIM_MODULE_ADDRESS, SIM_MODULE_NAME } from '../views.js';

export function handleModule(req: SimRequest, ctx: SimContext, rawAddress: string, rawName: string): SimReply {
  const address = parseAddress(pathParam('address', rawAddress));
  if (address === null) throw NodeError.badRequest(`failed to parse path parameter \`address\`: not an address: ${rawAddress}`);
  const name = pathParam('module_name', rawName);
  if (!isIdentifier(name)) throw NodeError.badRequest(`failed to parse path parameter \`module_name\`: not an identifier: ${rawName}`);
  const requested = requestedVersion(req.query);

  return atLedger(ctx, (info) => {
    const version = readVersion(requested, info);
    if (address !== SIM_MODULE_ADDRESS || name !== SIM_MODULE_NAME) {
      throw new NodeError(
        404,
        'module_not_found',
        `Module not found by Address(${address}), Module name(${name}) and Ledger version(${version})`,
      );
    }
    if (acceptFormat(req.headers.accept) === 'bcs') return reply(200, 'application/x-bcs', SIM_MODULE_BYTECODE);
    return jsonReply(200, simModuleJson());
  });
}
