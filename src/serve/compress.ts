// Compressed replies for clients that accept gzip (issue 14): each memory-tier
// entry is compressed once, off the event loop, after it is stored, and never on
// a hit. Small answers stay uncompressed (gzip would not pay for its header), and
// a compressed copy is kept only when it is smaller than the body, so the bytes on
// the wire are never more than a node sends.
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { StoredAnswer } from '../wire/read-request.js';

/** Answers smaller than this are sent as they are. */
export const COMPRESS_MIN_BYTES = 1024;

const gzipAsync = promisify(gzip);

/** The answer with a gzip copy of its body, or undefined when one would not pay. */
export async function withGzip(answer: StoredAnswer): Promise<StoredAnswer | undefined> {
  if (answer.gzip !== undefined || answer.body.length < COMPRESS_MIN_BYTES) return undefined;
  const compressed = await gzipAsync(answer.body, { level: 6 });
  return compressed.length < answer.body.length ? { ...answer, gzip: compressed } : undefined;
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
