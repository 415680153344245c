// JSON whitespace is exactly what serde_json takes (space,
// tab, LF, CR). Every other control character and every Unicode space around a
// body is a 400 from the proxy, on both parse paths (raw_item's one-regex fast
// path and the full scanner that view uses).
import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import { parseRawItem, parseView } from '../../src/routes/parse-read.js';
import type { RawRead } from '../../src/routes/route.js';
import { vendorNames } from '../../src/wire/vendor.js';

const vendor = vendorNames('node');
const JSON_WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Every C0 control, DEL, every C1 control, and every character JavaScript's \s or trim() calls a space. */
const CANDIDATES: number[] = [
  ...Array.from({ length: 0x21 }, (_, i) => i),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
  0xa0,
  0x1680,
  0x180e,
  ...Array.from({ length: 0x0b }, (_, i) => 0x2000 + i),
  0x2028,
  0x2029,
  0x202f,
  0x205f,
  0x3000,
  0xfeff,
];

const rawItemBody = (ws: string, where: 'before' | 'inside' | 'after'): string =>
  where === 'before' ? `${ws}{"key":"0x015a"}` : where === 'inside' ? `{"key":${ws}"0x015a"}` : `{"key":"0x015a"}${ws}`;

const viewBody = (ws: string, where: 'before' | 'inside' | 'after'): string => {
  const inner = `"function":"0x1::m::f","type_arguments":[],"arguments":[]`;
  return where === 'before' ? `${ws}{${inner}}` : where === 'inside' ? `{${inner},${ws}"x":1}` : `{${inner}}${ws}`;
};

function outcome(parse: () => unknown): string {
  try {
    parse();
    return 'ok';
  } catch (err) {
    if (err instanceof NodeError) return `${err.status} ${err.code}`;
    throw err;
  }
}

const rows = CANDIDATES.flatMap((cp) => (['before', 'inside', 'after'] as const).map((where) => [cp, where] as const));

describe('JSON whitespace is exactly space, tab, LF and CR', () => {
  it.each(rows)('U+%s %s a raw_item body', (cp, where) => {
    const raw: RawRead = {
      params: { table_handle: '0x1' },
      query: { ledger_version: '5' },
      contentType: 'application/json',
      accept: 'application/x-bcs',
      body: Buffer.from(rawItemBody(String.fromCodePoint(cp), where), 'utf8'),
    };
    expect(outcome(() => parseRawItem(raw))).toBe(JSON_WS.has(cp) ? 'ok' : '400 web_framework_error');
  });

  it.each(rows)('U+%s %s a view body', (cp, where) => {
    const raw: RawRead = {
      params: {},
      query: { ledger_version: '5' },
      contentType: 'application/json',
      accept: 'application/json',
      body: Buffer.from(viewBody(String.fromCodePoint(cp), where), 'utf8'),
    };
    expect(outcome(() => parseView(raw, vendor))).toBe(JSON_WS.has(cp) ? 'ok' : '400 web_framework_error');
  });
});
