// Binary form of a StoredAnswer in Redis (DESIGN: binary, not base64-in-JSON). An
// entry proves itself: it carries its body's length and a CRC-32 of every byte
// before the checksum, so an entry cut short, extended or changed is told apart
// from a good one and read as a miss.
//
//   size  field
//   1     format byte (FORMAT_V4)
//   1     flags: bit 0 = a cursor follows the content type
//   2     status, u16 big-endian
//   8     version, u64 big-endian
//   4     purges its writer knew of, u32 big-endian   } the entry's purge mark
//   1     route family length f                       } (purge-records.ts)
//   1     gasUsed length g (0 = absent)
//   f     route family, ASCII
//   g     gasUsed, ASCII
//   2     contentType length c, u16 big-endian
//   c     contentType, UTF-8
//   2     cursor length k, u16 big-endian   } flag bit 0 only
//   k     cursor, ASCII                     }
//   4     body length b, u32 big-endian
//   b     body bytes
//   4     CRC-32 (zlib's) of every byte above, u32 big-endian
//
// CRC-32 costs less than the body copy a read makes anyway, and several times
// less than a cryptographic hash; it catches every truncation (with the length),
// every burst of up to 32 bits and any random damage but one time in 4 billion. Redis is trusted: the check is for
// damage and foreign writers, not for an attacker.
//
// A new layout gets a new format byte. An entry of any other format (formats 1
// and 2 carry no length and no checksum, format 3 no purge mark) cannot prove
// itself and is read as a miss, then rewritten; the key scheme changes with the
// format (key.ts), so releases on one Redis do not overwrite each other's entries.
import { crc32 } from 'node:zlib';
import type { StoredAnswer } from '../../model/read.js';
import { ownedCopy } from '../owned.js';

export const FORMAT_V4 = 4;
const HAS_CURSOR = 1;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const PURGES_AT = 12;
const FAMILY_LENGTH_AT = 16;
const GAS_LENGTH_AT = 17;
/** format, flags, status, version, purges, family length, gas length */
const FIXED_HEADER = 18;
const CHECKSUM = 4;
const U64_MAX = (1n << 64n) - 1n;
const U32_MAX = 0xffffffff;

/**
 * What a range purge checks an entry by (purge-records.ts): its route family, and
 * how many purges of that Redis its writer knew of when it stored it.
 */
export interface EntryMark {
  family: string;
  purges: number;
}

/** The mark of an entry no range purge names: a fill's outcome, or a store without a family. */
const NO_MARK: EntryMark = { family: '', purges: 0 };

/**
 * Why an entry is not an answer: 'format' (empty, too short for a header, or of
 * another format), 'length' (its lengths disagree with its size: cut short or
 * extended), 'checksum' (its bytes changed).
 */
export type EntryFault = 'format' | 'length' | 'checksum';
export const ENTRY_FAULTS: readonly EntryFault[] = ['format', 'length', 'checksum'];

/**
 * Encode an answer with its purge mark. Throws RangeError for an answer the
 * layout cannot hold (status outside 100..599, version outside u64, gasUsed not
 * ASCII or over 255 bytes, content type over 65535 bytes, cursor not ASCII or over
 * 65535, body over 4 GiB) or a mark it cannot (family not ASCII or over 255 bytes,
 * purges outside u32). An empty gasUsed is stored as absent.
 */
export function encodeAnswer(a: StoredAnswer, mark: EntryMark = NO_MARK): Buffer {
  if (!Number.isInteger(a.status) || a.status < 100 || a.status > 599)
    throw new RangeError(`status not storable: ${a.status}`);
  if (a.version < 0n || a.version > U64_MAX) throw new RangeError(`version not a u64: ${a.version}`);
  const gas = a.gasUsed ?? '';
  if (gas.length > 255 || !PRINTABLE_ASCII.test(gas)) throw new RangeError('gasUsed not storable');
  const family = mark.family;
  if (family.length > 255 || !PRINTABLE_ASCII.test(family)) throw new RangeError('family not storable');
  if (!Number.isInteger(mark.purges) || mark.purges < 0 || mark.purges > U32_MAX)
    throw new RangeError(`purges not storable: ${mark.purges}`);
  const typeLength = Buffer.byteLength(a.contentType, 'utf8');
  if (typeLength > 0xffff) throw new RangeError('content type too long');
  const cursor = a.cursor;
  if (cursor !== undefined && (cursor.length > 0xffff || !PRINTABLE_ASCII.test(cursor)))
    throw new RangeError('cursor not storable');
  if (a.body.length > U32_MAX) throw new RangeError('body too long');

  const head =
    FIXED_HEADER + family.length + gas.length + 2 + typeLength + (cursor === undefined ? 0 : 2 + cursor.length) + 4;
  const buf = Buffer.allocUnsafe(head + a.body.length + CHECKSUM);
  buf[0] = FORMAT_V4;
  buf[1] = cursor === undefined ? 0 : HAS_CURSOR;
  buf.writeUInt16BE(a.status, 2);
  buf.writeBigUInt64BE(a.version, 4);
  buf.writeUInt32BE(mark.purges, PURGES_AT);
  buf[FAMILY_LENGTH_AT] = family.length;
  buf[GAS_LENGTH_AT] = gas.length;
  let pos = FIXED_HEADER + buf.write(family, FIXED_HEADER, 'latin1');
  pos += buf.write(gas, pos, 'latin1');
  buf.writeUInt16BE(typeLength, pos);
  pos += 2;
  pos += buf.write(a.contentType, pos, 'utf8');
  if (cursor !== undefined) {
    buf.writeUInt16BE(cursor.length, pos);
    pos += 2 + buf.write(cursor, pos + 2, 'latin1');
  }
  buf.writeUInt32BE(a.body.length, pos);
  pos += 4;
  pos += a.body.copy(buf, pos);
  buf.writeUInt32BE(crc32(buf.subarray(0, pos)), pos);
  return buf;
}

/** An entry's answer, or why it is none. Never throws. */
export function readEntry(buf: Buffer): StoredAnswer | EntryFault {
  if (buf.length < FIXED_HEADER + 2 + 4 + CHECKSUM || buf[0] !== FORMAT_V4) return 'format';
  const hasCursor = (buf[1] & HAS_CURSOR) !== 0;
  const gasAt = FIXED_HEADER + buf[FAMILY_LENGTH_AT];
  const gasLength = buf[GAS_LENGTH_AT];
  let pos = gasAt + gasLength;
  // Each length is checked against the size before it is read past.
  if (buf.length < pos + 2) return 'length';
  const typeLength = buf.readUInt16BE(pos);
  const typeAt = pos + 2;
  pos = typeAt + typeLength;
  let cursorAt = pos;
  let cursorLength = 0;
  if (hasCursor) {
    if (buf.length < pos + 2) return 'length';
    cursorLength = buf.readUInt16BE(pos);
    cursorAt = pos + 2;
    pos = cursorAt + cursorLength;
  }
  if (buf.length < pos + 4) return 'length';
  const bodyLength = buf.readUInt32BE(pos);
  const bodyAt = pos + 4;
  const end = bodyAt + bodyLength;
  if (end + CHECKSUM !== buf.length) return 'length';
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) return 'checksum';

  const answer: StoredAnswer = {
    status: buf.readUInt16BE(2),
    contentType: buf.toString('utf8', typeAt, typeAt + typeLength),
    // A copy of its own: the input is often a view of the Redis client's shared
    // read buffer, and an answer promoted to the memory tier would otherwise pin
    // all of it (as a copy from Node's pool would pin a slab).
    body: ownedCopy(buf.subarray(bodyAt, end)),
    version: buf.readBigUInt64BE(4),
  };
  if (gasLength > 0) answer.gasUsed = buf.toString('latin1', gasAt, gasAt + gasLength);
  if (hasCursor) answer.cursor = buf.toString('latin1', cursorAt, cursorAt + cursorLength);
  return answer;
}

/** The purges the writer of `buf`, an entry readEntry accepted, knew of: read on every Redis hit, so it allocates nothing. */
export function entryPurges(buf: Buffer): number {
  return buf.readUInt32BE(PURGES_AT);
}

/** The route family of `buf`, an entry readEntry accepted: read only when a range purge may name it. */
export function entryFamily(buf: Buffer): string {
  return buf.toString('latin1', FIXED_HEADER, FIXED_HEADER + buf[FAMILY_LENGTH_AT]);
}

/** An entry's answer; undefined for anything that fails the check. Never throws. */
export function decodeAnswer(buf: Buffer): StoredAnswer | undefined {
  const read = readEntry(buf);
  return typeof read === 'string' ? undefined : read;
}
