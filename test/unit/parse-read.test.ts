import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import { parseRawItem, parseView } from '../../src/routes/parse-read.js';
import type { RawRead } from '../../src/routes/route.js';
import { vendorNames } from '../../src/wire/vendor.js';
import { thrownBy } from '../helpers/expect.js';

const vendor = vendorNames('node');
const HANDLE = '0x' + 'ab'.repeat(32);

function raw(over: Partial<RawRead> & { json?: unknown }): RawRead {
  const { json, ...rest } = over;
  return {
    params: { table_handle: HANDLE },
    query: {},
    contentType: 'application/json',
    accept: 'application/x-bcs',
    body: Buffer.from(JSON.stringify(json ?? { key: '0x01' })),
    ...rest,
  };
}

const failure = (fn: () => unknown): NodeError => thrownBy(NodeError, fn);

describe('raw_item', () => {
  it('canonicalises handle forms and key case into one identity', () => {
    const a = parseRawItem(raw({ params: { table_handle: '0x1' }, json: { key: '0xAB' } }));
    const b = parseRawItem(raw({ params: { table_handle: '0'.repeat(63) + '1' }, json: { key: 'ab' } }));
    expect(a.identity).toBe(b.identity);
    expect(a.path).toBe(`/v1/tables/0x${'0'.repeat(63)}1/raw_item`);
    expect(a.version).toBeNull();
  });
  it('reads ledger_version as u64, leading zeros meaning the same version', () => {
    const r = parseRawItem(raw({ query: { ledger_version: '007' } }));
    expect(r.version).toBe(7n);
    expect(r.path.endsWith('?ledger_version=7')).toBe(true);
  });
  it.each([
    ['bad handle', { params: { table_handle: '0xZZ' } }],
    ['bad version', { query: { ledger_version: '-1' } }],
    ['repeated version', { query: { ledger_version: ['1', '2'] } }],
    ['wrong content type', { contentType: 'text/plain' }],
    ['missing content type', { contentType: undefined }],
    ['malformed JSON', { body: Buffer.from('{"key":') }],
    ['missing key', { json: { nokey: 1 } }],
    ['bad hex', { json: { key: '0xabc' } }],
    ['non-object body', { json: ['0x01'] }],
  ])('%s → 400 web_framework_error', (_name, over) => {
    const err = failure(() => parseRawItem(raw(over as Partial<RawRead>)));
    expect([err.status, err.code]).toEqual([400, 'web_framework_error']);
  });
  it.each([undefined, 'application/json', '*/*', 'application/json, application/x-bcs'])(
    'Accept %j → 403 api_disabled',
    (accept) => {
      const err = failure(() => parseRawItem(raw({ accept })));
      expect([err.status, err.code, err.message]).toEqual([
        403,
        'api_disabled',
        'Only BCS is supported as an AcceptType.',
      ]);
    },
  );
  it('parse errors win over the Accept rule, as on a node', () => {
    expect(
      failure(() => parseRawItem(raw({ accept: 'application/json', params: { table_handle: 'zz' } }))).status,
    ).toBe(400);
  });
});

describe('view', () => {
  const body = (fn: string, typeArgs: unknown, args: unknown): Buffer =>
    Buffer.from(JSON.stringify({ function: fn, type_arguments: typeArgs, arguments: args }));

  it('gives JSON bodies that differ in whitespace, order and address form one identity', () => {
    const a = parseView(raw({ body: body('0x1::sim::balance', ['0x1::a::B'], ['0x2']), accept: undefined }), vendor);
    const b = parseView(
      raw({
        body: Buffer.from(
          `{"arguments": ["0x2"], "type_arguments":["0x${'0'.repeat(63)}1::a::B"], "function":"0x0001::sim::balance"}`,
        ),
        accept: 'application/json',
      }),
      vendor,
    );
    expect(a.identity).toBe(b.identity);
    expect(a.format).toBe('json');
  });
  it('keeps argument values distinct', () => {
    const a = parseView(
      raw({ body: Buffer.from('{"function":"0x1::m::f","type_arguments":[],"arguments":[12345678901234567890]}') }),
      vendor,
    );
    const b = parseView(
      raw({ body: Buffer.from('{"function":"0x1::m::f","type_arguments":[],"arguments":[12345678901234567891]}') }),
      vendor,
    );
    expect(a.identity).not.toBe(b.identity);
  });
  it('selects the answer format from Accept', () => {
    expect(parseView(raw({ body: body('0x1::m::f', [], []), accept: 'application/x-bcs' }), vendor).format).toBe('bcs');
  });
  it.each([
    ['bad function id', body('0x1::m', [], [])],
    ['function not a string', body(7 as unknown as string, [], [])],
    ['missing type_arguments', Buffer.from('{"function":"0x1::m::f","arguments":[]}')],
    ['missing arguments', Buffer.from('{"function":"0x1::m::f","type_arguments":[]}')],
    ['bad type argument', body('0x1::m::f', ['vector<'], [])],
    ['type argument not a string', body('0x1::m::f', [1], [])],
    ['malformed JSON', Buffer.from('{"function":')],
  ])('%s → 400', (_name, b) => {
    const err = failure(() => parseView(raw({ body: b }), vendor));
    expect([err.status, err.code]).toEqual([400, 'web_framework_error']);
  });
  it('refuses a BCS media type of another vendor; malformed BCS is refused only at the ledger, as a node does', () => {
    expect(
      failure(() =>
        parseView(raw({ contentType: 'application/x.aptos.view_function+bcs', body: Buffer.from([1]) }), vendor),
      ).status,
    ).toBe(400);
    const read = parseView(raw({ contentType: vendor.viewBcsMediaType, body: Buffer.from([1, 2, 3]) }), vendor);
    expect(read.refusedAtLedger).toBe('Failed to deserialize input into ViewRequest: unexpected end of input');
  });
});
