// The cache key of a pinned answer (docs/design.md "Cache keys and entries"):
// (generation, vendor, chain id, route, format, N, canonical request), hashed with
// SHA-256 for shared stores. A purge of everything moves the generation
// (generation.ts), so no entry of the old one is looked up again, with no scan of
// Redis. The chain id is in it so two chains never share an entry (api.md §8), even
// on one Redis with one key prefix, and a devnet reset starts afresh.
import { hash } from 'node:crypto';
import type { ReadRequest } from '../model/read.js';

/**
 * Bump when the serialisation below or the entry format (codec.ts) changes, so
 * old entries are simply never looked up again instead of being misread, and
 * releases sharing one Redis during an upgrade do not overwrite each other's.
 */
const KEY_SCHEME = 'lp5';

/**
 * The unambiguous serialisation: every field but the last is either
 * length-prefixed (`<utf-16 length>:<text>`) or a decimal terminated by ':', so no
 * text can move from one field into another; identity runs to the end. The
 * memory tier uses it as is: it never leaves the process, and a hit then costs no
 * hash. Redis gets sharedKey() of it.
 *
 * `version` is passed separately from req.version because a latest read is stored
 * under the version its answer was read at. null: a path route (a transaction, a
 * block), whose path names the item without a version; '-' keeps it apart from any N.
 * `generation`: the cache generation the entry belongs to (CacheGeneration.current).
 */
export function cacheKeyText(
  vendor: string,
  chainId: number,
  req: ReadRequest,
  version: bigint | null,
  generation: number,
): string {
  return keyText(vendor, chainId, req, version ?? '-', generation);
}

/**
 * The key of the newest answer stored for a latest read, which the change feed
 * may prove still the latest: `L` where a key names its version, so it is apart
 * from every pinned entry and every path route's. The answer in it carries its
 * version.
 */
export function latestKeyText(vendor: string, chainId: number, req: ReadRequest, generation: number): string {
  return keyText(vendor, chainId, req, 'L', generation);
}

function keyText(vendor: string, chainId: number, req: ReadRequest, at: bigint | string, generation: number): string {
  const name = req.route.name;
  const key =
    `${KEY_SCHEME}:${generation}:${vendor.length}:${vendor}${chainId}:${name.length}:${name}` +
    `${req.format.length}:${req.format}${at}:${req.identity}`;
  // V8 keeps a concatenation as a rope of its pieces; a cache holding the rope as
  // its key would keep every piece. Reading a character flattens it in place.
  key.charCodeAt(0);
  return key;
}

/**
 * The key in shared stores: sha256 hex of the text, so no client input ever
 * becomes a raw Redis key and every key has the same short length.
 *
 * The text is hashed as UTF-8, which maps a lone surrogate to U+FFFD; identities
 * are built from hex and JSON.stringify output, which escapes lone surrogates, so
 * none reach here.
 */
export function sharedKey(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * The route name in a key text made by cacheKeyText (undefined for any other
 * text): how a purge by route family finds the memory tier's entries without the
 * tier keeping anything beside them.
 */
export function routeNameOfKey(text: string): string | undefined {
  if (!text.startsWith(`${KEY_SCHEME}:`)) return undefined;
  // past the generation
  let at = text.indexOf(':', KEY_SCHEME.length + 1) + 1;
  const vendorLengthEnd = text.indexOf(':', at);
  if (at === 0 || vendorLengthEnd < 0) return undefined;
  // past the vendor and the chain id (a decimal ended by ':')
  at = text.indexOf(':', vendorLengthEnd + 1 + Number(text.slice(at, vendorLengthEnd))) + 1;
  const nameLengthEnd = text.indexOf(':', at);
  if (at === 0 || nameLengthEnd < 0) return undefined;
  const nameAt = nameLengthEnd + 1;
  return text.slice(nameAt, nameAt + Number(text.slice(at, nameLengthEnd)));
}
