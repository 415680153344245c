// The body of POST /cache/purge (admin listener), checked. One of:
//   {"all": true}
//   {"family": "view", "fromVersion": "N", "toVersion": "M"}      toVersion optional: no upper bound
//   {"request": {"method": "POST", "path": "/v1/view?ledger_version=N", "body": "…",
//                "headers": {"content-type": "…", "accept": "…"}}}   or "bodyHex": "0x…"
// It becomes a PurgeScope, plain JSON that crosses to the workers, which each
// process turns into the CacheScope it purges: a request is parsed there, by the
// proxy's read parser (read-parser.ts) with the routes of the vendor the nodes
// named, so it names the very key a read of it would.
import { NodeError } from '../errors.js';
import type { RouteMatcher } from '../routes/table.js';
import type { CacheScope } from '../serve/purge.js';
import { parseHexBytes } from '../wire/hex.js';
import type { ReadRequest } from '../model/read.js';
import { parseU64 } from '../wire/u64.js';
import { parseRead, type ReadHeaders } from '../responder/read-parser.js';

/** One request to purge, as the admin gave it; its body as hex. */
interface PurgeRequest {
  method: string;
  path: string;
  bodyHex: string;
  headers: ReadHeaders;
}

export type PurgeScope =
  | { scope: 'all' }
  | { scope: 'family'; family: string; fromVersion: string; toVersion: string | null }
  | { scope: 'request'; request: PurgeRequest };

const refused = (why: string): NodeError => NodeError.badRequest(`cache purge: ${why}`);

/**
 * The scope a purge body asks for, or the 400 that says what is wrong with it.
 * `families`: every cached route family. A request is checked for its shape here;
 * whether the proxy caches it is for cacheScopeOf to say, where it is purged.
 */
export function purgeScopeOf(body: Buffer, families: ReadonlySet<string>): PurgeScope | NodeError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return refused(
      'the body is not JSON: give one of {"all": true}, {"family": …, "fromVersion": …}, {"request": {…}}',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return refused('the body must be a JSON object');
  const o = parsed as Record<string, unknown>;
  const asked = ['all', 'family', 'request'].filter((name) => o[name] !== undefined);
  if (asked.length !== 1) return refused('give exactly one of "all", "family" (with "fromVersion") and "request"');
  if (asked[0] === 'all')
    return o.all === true && Object.keys(o).length === 1 ? { scope: 'all' } : refused('"all" must be true, alone');
  if (asked[0] === 'family') return familyScope(o, families);
  const request = requestOf(o);
  return request instanceof NodeError ? request : { scope: 'request', request };
}

/** The CacheScope a process purges: a request parsed into its canonical read, or the 400 it is refused with. */
export function cacheScopeOf(scope: PurgeScope, routes: RouteMatcher): CacheScope | NodeError {
  if (scope.scope === 'all') return scope;
  if (scope.scope === 'family')
    return {
      scope: 'family',
      family: scope.family,
      from: BigInt(scope.fromVersion),
      to: scope.toVersion === null ? null : BigInt(scope.toVersion),
    };
  const { method, path, bodyHex, headers } = scope.request;
  const read = parseRead(routes, method, path, headers, parseHexBytes(bodyHex) ?? Buffer.alloc(0));
  if (read === undefined) return refused(`${method} ${path.split('?', 1)[0]} is not a cached route`);
  if (read instanceof NodeError) return refused(`the request is one the proxy refuses (${read.code}): ${read.message}`);
  if (read.refusedAtLedger !== undefined)
    return refused(`the request is one the proxy refuses (invalid_input): ${read.refusedAtLedger}`);
  if (read.version === null && read.route.pin === 'version') {
    return refused(
      'the request names no ledger_version: a latest read is stored under the version it was read at; purge that version, or by family and version range',
    );
  }
  return { scope: 'request', read };
}

/** The version a request's entry is stored at, for the log line: its ledger_version or the version its path names. */
export function versionOf(read: ReadRequest): string | undefined {
  const item = read.item;
  if (read.version !== null) return String(read.version);
  return item !== undefined && 'version' in item ? String(item.version) : undefined;
}

function familyScope(o: Record<string, unknown>, families: ReadonlySet<string>): PurgeScope | NodeError {
  const extra = Object.keys(o).filter((name) => name !== 'family' && name !== 'fromVersion' && name !== 'toVersion');
  if (extra.length > 0) return refused(`unknown member ${JSON.stringify(extra[0])} beside "family"`);
  const { family, fromVersion, toVersion } = o;
  if (typeof family !== 'string' || !families.has(family))
    return refused(`"family" must be one of ${[...families].join(', ')}`);
  const from = typeof fromVersion === 'string' ? parseU64(fromVersion) : null;
  if (from === null) return refused('"fromVersion" must be a u64 as a decimal string, e.g. "1000"');
  if (toVersion === undefined) return { scope: 'family', family, fromVersion: String(from), toVersion: null };
  const to = typeof toVersion === 'string' ? parseU64(toVersion) : null;
  if (to === null) return refused('"toVersion" must be a u64 as a decimal string, or absent for no upper bound');
  if (to < from) return refused('"toVersion" is below "fromVersion"');
  return { scope: 'family', family, fromVersion: String(from), toVersion: String(to) };
}

function requestOf(o: Record<string, unknown>): PurgeRequest | NodeError {
  const r = o.request;
  if (Object.keys(o).length !== 1 || typeof r !== 'object' || r === null || Array.isArray(r))
    return refused('"request" must be an object, alone');
  const { method, path, body, bodyHex, headers } = r as Record<string, unknown>;
  if (method !== 'GET' && method !== 'POST') return refused('"request.method" must be "GET" or "POST"');
  if (typeof path !== 'string' || !path.startsWith('/v1/'))
    return refused('"request.path" must be a path with its query, e.g. "/v1/view?ledger_version=5"');
  if (body !== undefined && bodyHex !== undefined) return refused('give "request.body" or "request.bodyHex", not both');
  if (body !== undefined && typeof body !== 'string')
    return refused('"request.body" must be a string (for bytes, "bodyHex": "0x…")');
  const bytes =
    bodyHex === undefined
      ? Buffer.from((body as string | undefined) ?? '', 'utf8')
      : typeof bodyHex === 'string'
        ? parseHexBytes(bodyHex)
        : null;
  if (bytes === null) return refused('"request.bodyHex" must be hex bytes, e.g. "0x0a0b"');
  const read = headersOf(headers);
  if (read instanceof NodeError) return read;
  return { method, path, bodyHex: bytes.toString('hex'), headers: read };
}

/** Only content-type and accept choose a cached answer: any other header is refused, not ignored. */
function headersOf(headers: unknown): ReadHeaders | NodeError {
  if (headers === undefined) return {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    return refused('"request.headers" must be an object');
  const out: ReadHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'content-type' && lower !== 'accept')
      return refused(`"request.headers" may name content-type and accept only, not ${JSON.stringify(name)}`);
    if (typeof value !== 'string') return refused(`"request.headers.${lower}" must be a string`);
    out[lower] = value;
  }
  return out;
}
