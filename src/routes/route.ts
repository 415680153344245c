// A cached route as one descriptor (DESIGN "Cache keys and entries"): how its
// request is matched and parsed into a canonical ReadRequest, and the ReadRoute
// data the read path serves it by. Adding a route is adding one descriptor.
import type { ReadRequest, ReadRoute } from '../model/read.js';

/** A client's request as the route parsers see it. */
export interface RawRead {
  /** the path parameters, %-decoded, by the names in the descriptor's url */
  params: Record<string, string>;
  /** the query string: a value per name, an array when a name repeats */
  query: Record<string, string | string[] | undefined>;
  contentType: string | undefined;
  accept: string | undefined;
  body: Buffer;
}

export interface RouteDescriptor extends ReadRoute {
  method: 'GET' | 'POST';
  /** the path pattern, fastify syntax: /v1/accounts/:address/resource/:tag */
  url: string;
  /** a validated canonical request; throws the NodeError a node would answer for bad input */
  parse(raw: RawRead): ReadRequest;
}

/**
 * The rules of a route pinned by `?ledger_version=N`: N is the version its answer
 * belongs to, the prune line a node answers 410 below, what routes the call
 * to a node that holds it, and the 404 a node answers for an N it has not
 * reached. A latest read names none of them.
 */
export const BY_LEDGER_VERSION = {
  pin: 'version',
  notYet404: ['version_not_found'],
  pruneBy: 'version',
  pruneAt: (req: ReadRequest): bigint | null => req.version,
  routingVersion: (req: ReadRequest): bigint | null => req.version,
  answerVersion: (req: ReadRequest): bigint | null => req.version,
  pinnedAt,
} as const satisfies Partial<ReadRoute>;

/**
 * `req` pinned at `version`. The canonical query (params.ts withQuery) puts
 * ledger_version first, so the pinned path is the latest one with it in front;
 * the identity never holds it.
 */
function pinnedAt(req: ReadRequest, version: bigint): ReadRequest {
  const [path, query] = splitQuery(req.version === null ? req.path : unpinned(req.path));
  return { ...req, version, path: `${path}?ledger_version=${version}${query === '' ? '' : `&${query}`}` };
}

function splitQuery(path: string): [string, string] {
  const at = path.indexOf('?');
  return at < 0 ? [path, ''] : [path.slice(0, at), path.slice(at + 1)];
}

/** A canonical path without its leading ledger_version parameter. */
function unpinned(path: string): string {
  const [bare, query] = splitQuery(path);
  const rest = query.split('&').filter((param) => !param.startsWith('ledger_version='));
  return rest.length === 0 ? bare : `${bare}?${rest.join('&')}`;
}
