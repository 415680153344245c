// Binary form of a StoredAnswer in Redis (DESIGN: binary, not base64-in-JSON):
//
//   offset  size  field
//   0       1     format byte (FORMAT_V1)
//   1       2     status, u16 big-endian
//   3       8     version, u64 big-endian
//   11      1     gasUsed length g (0 = absent)
//   12      g     gasUsed, ASCII
//   12+g    2     contentType length c, u16 big-endian
//   14+g    c     contentType, UTF-8
//   14+g+c  rest  body bytes
//
// FORMAT_V2, for an answer with a cursor (a page of resources or modules), adds
// after the content type:
//   14+g+c  2     cursor length k, u16 big-endian
//   16+g+c  k     cursor, ASCII
// and the body follows it. An answer without a cursor is still written as V1.
//
// A new layout gets a new format byte; readers treat an unknown one as a miss, so
// instances of two releases can share one Redis.
import { isUtf8 } from 'node:buffer';
import type { StoredAnswer } from '../wire/read-request.js';

export const FORMAT_V1 = 1;
export const FORMAT_V2 = 2;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const FIXED_HEADER = 12;
const U64_MAX = (1n << 64n) - 1n;

/**
 * Encode an answer. Throws RangeError for an answer the layout cannot hold (status
 * outside 100..599, version outside u64, gasUsed not ASCII or over 255 bytes,
 * content type over 65535 bytes). An empty gasUsed is stored as absent.
 */
export function encodeAnswer(a: StoredAnswer): Buffer {
  if (!Number.isInteger(a.status) || a.status < 100 || a.status > 599) {
    throw new RangeError(`status not storable: ${a.status}`);
  }
  if (a.version < 0n || a.version > U64_MAX) throw new RangeError(`version not a u64: ${a.version}`);
  const gas = a.gasUsed ?? '';
  if (gas.length > 255 || !PRINTABLE_ASCII.test(gas)) throw new RangeError('gasUsed not storable');
  const typeLength = Buffer.byteLength(a.contentType, 'utf8');
  if (typeLength > 0xffff) throw new RangeError('content type too long');
  const cursor = a.cursor;
  if (cursor !== undefined && (cursor.length > 0xffff || !PRINTABLE_ASCII.test(cursor))) throw new RangeError('cursor not storable');

  const head = FIXED_HEADER + gas.length + 2 + typeLength + (cursor === undefined ? 0 : 2 + cursor.length);
  const buf = Buffer.allocUnsafe(head + a.body.length);
  buf.writeUInt8(cursor === undefined ? FORMAT_V1 : FORMAT_V2, 0);
  buf.writeUInt16BE(a.status, 1);
  buf.writeBigUInt64BE(a.version, 3);
  buf.writeUInt8(gas.length, 11);
  let pos = FIXED_HEADER + buf.write(gas, FIXED_HEADER, 'latin1');
  buf.writeUInt16BE(typeLength, pos);
  pos += 2;
  pos += buf.write(a.contentType, pos, 'utf8');
  if (cursor !== undefined) {
    buf.writeUInt16BE(cursor.length, pos);
    pos += 2 + buf.write(cursor, pos + 2, 'latin1');
  }
  a.body.copy(buf, pos);
  return buf;
}

/** Decode an entry; undefined for anything truncated, malformed or of an unknown format. Never throws. */
export function decodeAnswer(buf: Buffer): StoredAnswer | undefined {
  const format = buf[0];
  if (buf.length < FIXED_HEADER + 2 || (format !== FORMAT_V1 && format !== FORMAT_V2)) return undefined;
  const status = buf.readUInt16BE(1);
  if (status < 100 || status > 599) return undefined;
  const version = buf.readBigUInt64BE(3);
  const gasLength = buf[11];
  let pos = FIXED_HEADER + gasLength;
  if (buf.length < pos + 2) return undefined;
  const gasUsed = gasLength === 0 ? undefined : buf.toString('latin1', FIXED_HEADER, pos);
  if (gasUsed !== undefined && !PRINTABLE_ASCII.test(gasUsed)) return undefined;
  const typeLength = buf.readUInt16BE(pos);
  pos += 2;
  if (buf.length < pos + typeLength) return undefined;
  const typeBytes = buf.subarray(pos, pos + typeLength);
  // Invalid UTF-8 would decode to U+FFFD: not what was stored.
  if (!isUtf8(typeBytes)) return undefined;
  const contentType = typeBytes.toString('utf8');
  pos += typeLength;
  let cursor: string | undefined;
  if (format === FORMAT_V2) {
    if (buf.length < pos + 2) return undefined;
    const cursorLength = buf.readUInt16BE(pos);
    pos += 2;
    if (buf.length < pos + cursorLength) return undefined;
    cursor = buf.toString('latin1', pos, pos + cursorLength);
    if (!PRINTABLE_ASCII.test(cursor)) return undefined;
    pos += cursorLength;
  }
  // A copy: the input is often a view of the Redis client's shared read buffer,
  // and an answer promoted to the memory tier would otherwise pin all of it.
  const body = Buffer.from(buf.subarray(pos));
  const answer: StoredAnswer = { status, contentType, body, version };
  if (gasUsed !== undefined) answer.gasUsed = gasUsed;
  if (cursor !== undefined) answer.cursor = cursor;
  return answer;
}
