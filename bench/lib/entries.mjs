// The small answers scenario 6a fills the memory tier with, shaped like raw_item
// hits: the request goes through the proxy's own parseRawItem, the key is the one
// the memory tier uses (detected once per process: see memoryKeyFunction), the body
// is an 8-byte BCS u64 in a compact Buffer, numbered so every key is distinct. These
// are the best case: real misses hand over bodies that keep more alive (scenario 6b).
import * as keys from '../../dist/cache/key.js';
import { entrySize } from '../../dist/cache/memory.js';
import { parseRawItem } from '../../dist/routes/parse-read.js';
import { HANDLE, itemKey } from './requests.mjs';

export const VERSION = 1000n;

/** The ReadRequest of a pinned raw_item read of item i, as the proxy parses it. */
export function readRequest(i) {
  return parseRawItem({
    params: { table_handle: HANDLE },
    query: { ledger_version: String(VERSION) },
    contentType: 'application/json',
    accept: 'application/x-bcs',
    body: Buffer.from(JSON.stringify({ key: itemKey(i) })),
  });
}

/** The key functions the memory tier might use: the key text, or its sha256 (older layouts). */
export const KEY_FUNCTIONS = Object.fromEntries(
  [
    ['cacheKeyText', keys.cacheKeyText],
    ['cacheKey', keys.cacheKey],
  ].filter(([, f]) => typeof f === 'function'),
);

/** The sim's chain id (its default), part of every cache key since keys carry it. */
const CHAIN_ID = 4;

/** A key function's key of `req` at `version`, whichever signature it has (with or without the chain id, and the cache generation 0). */
export function keyOf(keyFn, req, version, chainId = CHAIN_ID) {
  if (keyFn.length >= 5) return keyFn('node', chainId, req, version, 0);
  return keyFn.length >= 4 ? keyFn('node', chainId, req, version) : keyFn('node', req, version);
}

/** [key, answer] of entry i under `keyFn`. */
export function entry(i, keyFn) {
  const value = new BigUint64Array([(BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn]);
  // Buffer.from copies into Node's shared 8 KiB pool: a compact small Buffer.
  const body = Buffer.from(new Uint8Array(value.buffer));
  return [
    keyOf(keyFn, readRequest(i), VERSION),
    { status: 200, contentType: 'application/x-bcs', body, version: VERSION },
  ];
}

/** The bytes the memory tier charges for entry i. */
export function entryBytes(i, keyFn) {
  return entrySize(...entry(i, keyFn));
}
