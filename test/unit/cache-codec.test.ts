import { describe, expect, it } from 'vitest';
import { decodeAnswer, encodeAnswer, FORMAT_V1, FORMAT_V2 } from '../../src/cache/codec.js';
import type { StoredAnswer } from '../../src/wire/read-request.js';

const sample: StoredAnswer = {
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: Buffer.from('[{"value":"100"}]'),
  gasUsed: '12',
  version: 2n ** 60n + 3n,
};

describe('answer codec', () => {
  it('round-trips every field', () => {
    const decoded = decodeAnswer(encodeAnswer(sample));
    expect(decoded).toEqual(sample);
  });

  it('an answer with a cursor (a page) is V2 and round-trips it; without one it stays V1, readable by older releases', () => {
    const page: StoredAnswer = { ...sample, cursor: '0x0100000000000000000000000000000000000000000000000000000000000000010c' };
    const encoded = encodeAnswer(page);
    expect(encoded[0]).toBe(FORMAT_V2);
    expect(decodeAnswer(encoded)).toEqual(page);
    expect(encodeAnswer(sample)[0]).toBe(FORMAT_V1);
    for (let n = 0; n < encoded.length - page.body.length; n++) expect(decodeAnswer(encoded.subarray(0, n)), `truncated to ${n}`).toBeUndefined();
    expect(() => encodeAnswer({ ...sample, cursor: 'a\r\nb' })).toThrow(RangeError);
  });

  it('round-trips an absent gasUsed, an empty body, u64 max and a non-ASCII content type', () => {
    const a: StoredAnswer = { status: 404, contentType: 'text/plain; x=é', body: Buffer.alloc(0), version: 2n ** 64n - 1n };
    const decoded = decodeAnswer(encodeAnswer(a));
    expect(decoded).toEqual(a);
    expect(decoded).not.toHaveProperty('gasUsed');
  });

  it('is binary: the layout is format byte, status, version, gas, content type, body', () => {
    const buf = encodeAnswer({ status: 200, contentType: 'a/b', body: Buffer.from([0xff, 0x00]), gasUsed: '9', version: 1n });
    expect(buf.toString('hex')).toBe('01' + '00c8' + '0000000000000001' + '01' + '39' + '0003' + Buffer.from('a/b').toString('hex') + 'ff00');
    expect(buf[0]).toBe(FORMAT_V1);
  });

  it('decodes to an independent copy of the body', () => {
    const buf = encodeAnswer(sample);
    const decoded = decodeAnswer(buf)!;
    buf.fill(0);
    expect(decoded.body.toString()).toBe('[{"value":"100"}]');
  });

  it('returns undefined for every truncation', () => {
    const buf = encodeAnswer({ ...sample, body: Buffer.alloc(0) });
    for (let n = 0; n < buf.length; n++) {
      expect(decodeAnswer(buf.subarray(0, n)), `truncated to ${n}`).toBeUndefined();
    }
  });

  it('returns undefined for an unknown format byte, a bad status, bad gas or bad UTF-8', () => {
    const good = encodeAnswer(sample);
    const patched = (at: number, byte: number): Buffer => {
      const b = Buffer.from(good);
      b[at] = byte;
      return b;
    };
    expect(decodeAnswer(patched(0, 0))).toBeUndefined();
    expect(decodeAnswer(patched(0, 2))).toBeUndefined();
    expect(decodeAnswer(patched(1, 0xff))).toBeUndefined();
    expect(decodeAnswer(patched(12, 0x01))).toBeUndefined();
    const typeStart = 12 + 2 + 2;
    expect(decodeAnswer(patched(typeStart, 0xc3))).toBeUndefined();
    // a content type length that runs past the end
    const long = Buffer.from(good);
    long.writeUInt16BE(0xffff, 14);
    expect(decodeAnswer(long)).toBeUndefined();
  });

  it('never throws on arbitrary bytes', () => {
    let seed = 1;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    for (let i = 0; i < 2000; i++) {
      const buf = Buffer.alloc(i % 40, 0);
      for (let j = 0; j < buf.length; j++) buf[j] = rand();
      if (buf.length > 0 && i % 2 === 0) buf[0] = FORMAT_V1;
      expect(() => decodeAnswer(buf)).not.toThrow();
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
