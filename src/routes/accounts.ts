// GET /v1/accounts/{address}[/…]: state read at ?ledger_version=N (api.md §9).
// Every one is pinned by N; a missing account, resource or module at N is a fact
// about N, cached like a 200.
import type { ReadRequest } from '../model/read.js';
import type { StateTarget } from '../model/state-read.js';
import {
  addressParam,
  answerFormat,
  assetParam,
  identifierParam,
  ledgerVersion,
  limitParam,
  startParam,
  structTagParam,
  withQuery,
} from './params.js';
import { BY_LEDGER_VERSION, type RawRead, type RouteDescriptor } from './route.js';
import { stateReadOf } from './state-reads.js';

/** What names the read, besides N and the format: its node path and identity. */
interface Target {
  path: string;
  identity: string;
  /** the route's own query parameters, in the node's order */
  query?: ReadonlyArray<readonly [string, string | undefined]>;
  /** what it names in the ledger's state, when the change feed can tell its answer is still the latest */
  state?: StateTarget;
}

/** A GET pinned by ?ledger_version, whose target the path and query name. */
function pinnedGet(
  route: Pick<RouteDescriptor, 'name' | 'family' | 'url' | 'deterministic404' | 'stateRead'>,
  target: (raw: RawRead) => Target,
): RouteDescriptor {
  const descriptor: RouteDescriptor = {
    ...route,
    ...BY_LEDGER_VERSION,
    method: 'GET',
    parse(raw: RawRead): ReadRequest {
      const t = target(raw);
      const version = ledgerVersion(raw);
      const { format, accept } = answerFormat(raw);
      const { path, lines } = withQuery(t.path, [['ledger_version', version ?? undefined], ...(t.query ?? [])]);
      const read: ReadRequest = {
        route: descriptor,
        version,
        format,
        identity: t.identity + lines,
        method: 'GET',
        path,
        accept,
      };
      if (t.state !== undefined) read.target = t.state;
      return read;
    },
  };
  return descriptor;
}

const FAMILY = 'accounts';
// Older nodes answer a list of a missing account with account_not_found; newer ones []: both facts at N.
const ACCOUNT_404 = ['account_not_found'];

function page(raw: RawRead, what: 'resources' | 'modules'): Target {
  const address = addressParam(raw, 'address');
  return {
    path: `/v1/accounts/${address}/${what}`,
    identity: address,
    state: { kind: what, address },
    query: [
      ['start', startParam(raw)],
      ['limit', limitParam(raw)],
    ],
  };
}

export const accountRoutes: readonly RouteDescriptor[] = [
  pinnedGet(
    {
      name: 'account',
      family: FAMILY,
      url: '/v1/accounts/:address',
      deterministic404: ACCOUNT_404,
      stateRead: stateReadOf,
    },
    (raw) => {
      const address = addressParam(raw, 'address');
      return { path: `/v1/accounts/${address}`, identity: address, state: { kind: 'account', address } };
    },
  ),
  pinnedGet(
    {
      name: 'resources',
      family: FAMILY,
      url: '/v1/accounts/:address/resources',
      deterministic404: ACCOUNT_404,
      stateRead: stateReadOf,
    },
    (raw) => page(raw, 'resources'),
  ),
  pinnedGet(
    {
      name: 'resource',
      family: FAMILY,
      url: '/v1/accounts/:address/resource/:resource_type',
      deterministic404: ['resource_not_found', ...ACCOUNT_404],
      stateRead: stateReadOf,
    },
    (raw) => {
      const address = addressParam(raw, 'address');
      const tag = structTagParam(raw, 'resource_type');
      return {
        path: `/v1/accounts/${address}/resource/${encodeURIComponent(tag)}`,
        identity: `${address}\n${tag}`,
        state: { kind: 'resource', address, tag },
      };
    },
  ),
  pinnedGet(
    {
      name: 'modules',
      family: FAMILY,
      url: '/v1/accounts/:address/modules',
      deterministic404: ACCOUNT_404,
      stateRead: stateReadOf,
    },
    (raw) => page(raw, 'modules'),
  ),
  pinnedGet(
    {
      name: 'module',
      family: FAMILY,
      url: '/v1/accounts/:address/module/:module_name',
      deterministic404: ['module_not_found', ...ACCOUNT_404],
      stateRead: stateReadOf,
    },
    (raw) => {
      const address = addressParam(raw, 'address');
      const name = identifierParam(raw, 'module_name');
      return {
        path: `/v1/accounts/${address}/module/${name}`,
        identity: `${address}\n${name}`,
        state: { kind: 'module', address, name },
      };
    },
  ),
  // No existence check on a node: an absent balance is 0, never a 404.
  pinnedGet(
    { name: 'balance', family: FAMILY, url: '/v1/accounts/:address/balance/:asset_type', deterministic404: [] },
    (raw) => {
      const address = addressParam(raw, 'address');
      const asset = assetParam(raw, 'asset_type');
      return { path: `/v1/accounts/${address}/balance/${encodeURIComponent(asset)}`, identity: `${address}\n${asset}` };
    },
  ),
];
