// Compressed replies for clients that accept gzip: each memory-tier
// entry is compressed once, off the event loop, after it is stored, and never on
// a hit. Small answers stay uncompressed (gzip would not pay for its header), and
// a compressed copy is kept only when it is smaller than the body, so the bytes on
// the wire are never more than a node sends.
import { promisify } from 'node:util';
import { gzip, type ZlibOptions } from 'node:zlib';
import { ownedCopy } from '../cache/owned.js';
import { type StoredAnswer, storedAnswerWith } from '../model/read.js';

/** Answers smaller than this are sent as they are. */
const COMPRESS_MIN_BYTES = 1024;

const gzipAsync = promisify(gzip);

/**
 * zlib's state and output buffer sized to the body instead of its defaults (a 32
 * KiB window, a 32 Ki-slot hash, a 16 KiB output chunk: about 270 KiB of native
 * memory per call, freed and allocated again for every answer, which scatters the
 * malloc heap). A window that covers the whole body and a symbol buffer that holds
 * it compress to the same bytes.
 */
function zlibOptionsFor(length: number): ZlibOptions {
  const bits = Math.ceil(Math.log2(length + 262));
  return {
    level: 6,
    windowBits: Math.min(15, Math.max(9, bits)),
    memLevel: Math.min(8, Math.max(1, bits - 6)),
    chunkSize: Math.max(64, length),
  };
}

/** The answer with a gzip copy of its body, or undefined when one would not pay. */
export async function withGzip(answer: StoredAnswer): Promise<StoredAnswer | undefined> {
  if (answer.gzip !== undefined || answer.body.length < COMPRESS_MIN_BYTES) return undefined;
  const compressed = await gzipAsync(answer.body, zlibOptionsFor(answer.body.length));
  // Kept in bytes of its own: zlib hands back a view of its output chunk or of
  // Node's shared buffer pool, which would stay alive with the entry.
  if (compressed.length >= answer.body.length) return undefined;
  return storedAnswerWith(answer, answer.body, ownedCopy(compressed));
}

/** Does an Accept-Encoding header allow gzip? (`gzip`, `x-gzip` or `*`, with a q above 0.) */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined || header === '') return false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.split(';');
    const name = coding.trim().toLowerCase();
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
