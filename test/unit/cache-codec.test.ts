import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeAnswer,
  encodeAnswer,
  entryFamily,
  entryPurges,
  FORMAT_V4,
  readEntry,
} from '../../src/cache/redis/codec.js';
import type { StoredAnswer } from '../../src/model/read.js';

const sample: StoredAnswer = {
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: Buffer.from('[{"value":"100"}]'),
  gasUsed: '12',
  version: 2n ** 60n + 3n,
};

describe('answer codec', () => {
  it('round-trips every field', () => {
    expect(decodeAnswer(encodeAnswer(sample))).toEqual(sample);
  });

  it('round-trips a cursor (a page), an empty one included', () => {
    for (const cursor of ['0x0100000000000000000000000000000000000000000000000000000000000000010c', '']) {
      const page: StoredAnswer = { ...sample, cursor };
      expect(decodeAnswer(encodeAnswer(page))).toEqual(page);
    }
    expect(decodeAnswer(encodeAnswer(sample))).not.toHaveProperty('cursor');
    expect(() => encodeAnswer({ ...sample, cursor: 'a\r\nb' })).toThrow(RangeError);
  });

  it('round-trips an absent gasUsed, an empty body, u64 max and a non-ASCII content type', () => {
    const a: StoredAnswer = {
      status: 404,
      contentType: 'text/plain; x=é',
      body: Buffer.alloc(0),
      version: 2n ** 64n - 1n,
    };
    const decoded = decodeAnswer(encodeAnswer(a));
    expect(decoded).toEqual(a);
    expect(decoded).not.toHaveProperty('gasUsed');
  });

  it('carries the purge mark: the family and the purges its writer knew of; none by default', () => {
    const buf = encodeAnswer({ ...sample, cursor: 'c' }, { family: 'raw_item', purges: 2 ** 32 - 1 });
    expect(decodeAnswer(buf)).toEqual({ ...sample, cursor: 'c' });
    expect([entryFamily(buf), entryPurges(buf)]).toEqual(['raw_item', 2 ** 32 - 1]);
    const plain = encodeAnswer(sample);
    expect([entryFamily(plain), entryPurges(plain)]).toEqual(['', 0]);
    expect(() => encodeAnswer(sample, { family: 'view', purges: 2 ** 32 })).toThrow(RangeError);
    expect(() => encodeAnswer(sample, { family: 'x'.repeat(256), purges: 0 })).toThrow(RangeError);
  });

  it('is binary: format, flags, status, version, purges, family, gas, content type, body length, body, CRC-32 of all before it', () => {
    const buf = encodeAnswer(
      { status: 200, contentType: 'a/b', body: Buffer.from([0xff, 0x00]), gasUsed: '9', version: 1n },
      { family: 'view', purges: 7 },
    );
    const family = Buffer.from('view').toString('hex');
    const covered =
      '04' +
      '00' +
      '00c8' +
      '0000000000000001' +
      '00000007' +
      '04' +
      '01' +
      family +
      '39' +
      '0003' +
      Buffer.from('a/b').toString('hex') +
      '00000002' +
      'ff00';
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc32(Buffer.from(covered, 'hex')));
    expect(buf.toString('hex')).toBe(covered + checksum.toString('hex'));
    expect(buf[0]).toBe(FORMAT_V4);
  });

  it('decodes to an independent copy of the body', () => {
    const buf = encodeAnswer(sample);
    const decoded = decodeAnswer(buf)!;
    buf.fill(0);
    expect(decoded.body.toString()).toBe('[{"value":"100"}]');
  });

  it('refuses every truncation and every extension', () => {
    for (const answer of [sample, { ...sample, cursor: 'c' }, { ...sample, body: Buffer.alloc(0) }]) {
      const buf = encodeAnswer(answer, { family: 'view', purges: 1 });
      for (let n = 0; n < buf.length; n++)
        expect(readEntry(buf.subarray(0, n)), `truncated to ${n}`).toMatch(/^(format|length)$/);
      expect(readEntry(Buffer.concat([buf, Buffer.of(0)]))).toBe('length');
    }
  });

  it('refuses every single bit flipped, wherever it is', () => {
    const buf = encodeAnswer({ ...sample, cursor: 'c' }, { family: 'view', purges: 3 });
    for (let at = 0; at < buf.length; at++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(buf);
        flipped[at] ^= 1 << bit;
        expect(readEntry(flipped), `byte ${at} bit ${bit}`).toMatch(/^(format|length|checksum)$/);
      }
    }
  });

  it('refuses the formats of earlier releases: no length or checksum, or no purge mark', () => {
    const v1 = Buffer.concat([
      Buffer.from('0100c8000000000000000101390003', 'hex'),
      Buffer.from('a/b'),
      Buffer.from([0xff, 0x00]),
    ]);
    expect(readEntry(v1)).toBe('format');
    expect(readEntry(Buffer.concat([Buffer.of(2), v1.subarray(1)]))).toBe('format');
    const v3 = Buffer.from(
      '03' +
        '00' +
        '00c8' +
        '0000000000000001' +
        '00' +
        '0003' +
        Buffer.from('a/b').toString('hex') +
        '00000002' +
        'ff00',
      'hex',
    );
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc32(v3));
    expect(readEntry(Buffer.concat([v3, checksum]))).toBe('format');
    expect(readEntry(Buffer.alloc(0))).toBe('format');
  });

  it('never throws on arbitrary bytes, and passes none of them', () => {
    let seed = 1;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    for (let i = 0; i < 2000; i++) {
      const buf = Buffer.alloc(i % 60, 0);
      for (let j = 0; j < buf.length; j++) buf[j] = rand();
      if (buf.length > 0 && i % 2 === 0) buf[0] = FORMAT_V4;
      expect(typeof readEntry(buf)).toBe('string');
    }
  });

  it('refuses to encode what the layout cannot hold', () => {
    expect(() => encodeAnswer({ ...sample, status: 70000 })).toThrow(RangeError);
    expect(() => encodeAnswer({ ...sample, version: -1n })).toThrow(RangeError);
    expect(() => encodeAnswer({ ...sample, version: 2n ** 64n })).toThrow(RangeError);
    expect(() => encodeAnswer({ ...sample, gasUsed: 'x'.repeat(256) })).toThrow(RangeError);
    expect(() => encodeAnswer({ ...sample, gasUsed: 'é' })).toThrow(RangeError);
    expect(() => encodeAnswer({ ...sample, contentType: 'x'.repeat(70000) })).toThrow(RangeError);
  });
});
