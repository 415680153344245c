// fast-check generators of client input for the two served endpoints and for the
// rest of the URL space: valid requests, and mutations of them (truncation, extra
// bytes, wrong types, huge numbers, deep nesting, unicode, oversized bodies).
// A request is tagged `valid` only when every part of it was drawn from the valid
// pools, so a node must answer it like any other well-formed read.
import fc from 'fast-check';
import { SIM_MODULE_ADDRESS, simTableItem } from '../../src/sim/index.js';
import type { TypeTag } from '../../src/wire/move-type.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { u64le } from '../helpers/bytes.js';

export const HANDLE = '0x' + 'ab'.repeat(32);
const CANDIDATE_KEYS = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 0x5a]));
export const PRESENT_KEY = CANDIDATE_KEYS.find((k) => simTableItem(HANDLE, k, 0n) !== null)!;
const ABSENT_KEY = CANDIDATE_KEYS.find((k) => simTableItem(HANDLE, k, 0n) === null)!;

/** The fuzz stack's ledger: latest 1000, oldest 400 (pruned below). */
export const FUZZ_LATEST = 1000n;
export const FUZZ_OLDEST = 400n;
/** The proxy's and the nodes' body limit (8 MiB, the default). */
const BODY_LIMIT = 8 * 1024 * 1024;

type Endpoint = 'raw_item' | 'view';

/** A body built at send time (an oversized one is not worth keeping in a counterexample). */
export type BodySpec = { bytes: Buffer } | { padTo: number; json: string };

export interface FuzzRequest {
  method: string;
  /** path and query as sent: only bytes 0x21-0x7e (everything else is %-encoded) */
  path: string;
  /** values are latin1 strings of bytes 0x09, 0x20-0x7e, 0x80-0xff (UTF-8 bytes for unicode) */
  headers: Record<string, string>;
  body?: BodySpec;
  /** the served endpoint the path was built for, or null for any other path */
  endpoint: Endpoint | null;
  /** every part came from a valid pool */
  valid: boolean;
  /** which generators made it, for reports */
  tags: string[];
}

export function bodyBytes(spec: BodySpec | undefined): Buffer | undefined {
  if (spec === undefined) return undefined;
  if ('bytes' in spec) return spec.bytes;
  const json = Buffer.from(spec.json);
  // JSON stays valid when padded with whitespace: only its size is wrong.
  return spec.padTo <= json.length ? json : Buffer.concat([json, Buffer.alloc(spec.padTo - json.length, 0x20)]);
}

/** UTF-8 bytes of arbitrary text as a latin1 string: what an HTTP client can put in a header. */
function asHeaderValue(text: string): string {
  return Buffer.from(text.replace(/[\r\n\0]/g, ''), 'utf8')
    .toString('latin1')
    .replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}

/** %-encodes every byte outside 0x21-0x7e (of the UTF-8 form), keeping / ? # % & = as they are. */
function encodePathBytes(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x21 && byte <= 0x7e ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

interface Part<T> {
  value: T;
  valid: boolean;
  tag: string;
}

const valid = <T>(tag: string, arb: fc.Arbitrary<T>): fc.Arbitrary<Part<T>> =>
  arb.map((value) => ({ value, valid: true, tag }));
const invalid = <T>(tag: string, arb: fc.Arbitrary<T>): fc.Arbitrary<Part<T>> =>
  arb.map((value) => ({ value, valid: false, tag }));

/** Text with a fair share of the characters that break parsers: unicode, controls, quotes, %. */
const nastyText = (maxLength = 24): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.constantFrom(
      'é',
      '\u{1F600}',
      '\u202e',
      '\ufeff',
      '\u0000',
      '\r\n',
      '%',
      '%00',
      '%zz',
      '"',
      "'",
      '\\',
      '../',
      '//',
      ' ',
      '\t',
      '１',
      '٣',
    ),
  );

const hexDigits = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'.split('')), minLength: min, maxLength: max });

// ---------------------------------------------------------------- path parts

const handle: fc.Arbitrary<Part<string>> = fc.oneof(
  {
    weight: 6,
    arbitrary: valid(
      'handle',
      fc.constantFrom(
        HANDLE,
        HANDLE.toUpperCase().replace('0X', '0x'),
        'ab'.repeat(32),
        '0x1',
        '0x01',
        '0xAB',
        '0x' + '0'.repeat(64),
        '%30x1',
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: valid(
      'handle-hex',
      hexDigits(1, 64).map((h) => '0x' + h),
    ),
  },
  {
    weight: 3,
    arbitrary: invalid(
      'bad-handle',
      fc.oneof(
        fc.constantFrom(
          '0x',
          '',
          '0X1',
          'x1',
          '1',
          'ab'.repeat(31),
          '0x' + '1'.repeat(65),
          'ab'.repeat(33),
          '0x1g',
          ' 0x1',
          '0x1 ',
          '0x%31',
          '%',
          '%zz',
          '0x1%2F',
          '%2F',
          '..',
          '.',
          '0x1;x',
          '0x-1',
          '-0x1',
          '+0x1',
          '0x1%00',
        ),
        hexDigits(65, 80).map((h) => '0x' + h),
        nastyText().map((t) => t.replace(/[/?#]/g, '')),
      ),
    ),
  },
);

/** A ledger_version text (percent-encoded as needed by the caller). */
const version: fc.Arbitrary<Part<string>> = fc.oneof(
  { weight: 5, arbitrary: valid('v-window', fc.bigInt(FUZZ_OLDEST, FUZZ_LATEST).map(String)) },
  {
    weight: 1,
    arbitrary: valid(
      'v-zeros',
      fc.tuple(fc.integer({ min: 1, max: 20 }), fc.bigInt(FUZZ_OLDEST, FUZZ_LATEST)).map(([z, v]) => '0'.repeat(z) + v),
    ),
  },
  {
    weight: 1,
    // A leading '+' (Rust's u64::from_str), %-encoded: a bare '+' in a query string is a space.
    arbitrary: valid(
      'v-plus',
      fc
        .tuple(fc.integer({ min: 0, max: 20 }), fc.bigInt(FUZZ_OLDEST, FUZZ_LATEST))
        .map(([z, v]) => '%2B' + '0'.repeat(z) + v),
    ),
  },
  { weight: 2, arbitrary: valid('v-pruned', fc.bigInt(0n, FUZZ_OLDEST - 1n).map(String)) },
  {
    weight: 2,
    arbitrary: valid(
      'v-future',
      fc.oneof(fc.bigInt(FUZZ_LATEST + 1n, 18446744073709551615n), fc.constant(18446744073709551615n)).map(String),
    ),
  },
  {
    weight: 4,
    arbitrary: invalid(
      'bad-version',
      fc.oneof(
        fc.constantFrom(
          '',
          '-1',
          '+5',
          '%2B',
          '%2B%2B5',
          '%2B-1',
          '-%2B5',
          '%2B%205',
          '1.0',
          'abc',
          '18446744073709551616',
          '99999999999999999999999',
          ' 1',
          '1 ',
          '1e3',
          '0x10',
          '１',
          '٣',
          '9\u0000',
          '%',
          '%39%39',
          '1,2',
          '0'.repeat(65),
          '-0',
          'NaN',
          'Infinity',
          'true',
          '[]',
          '{}',
        ),
        fc.bigInt(18446744073709551616n, 2n ** 80n).map(String),
        fc.bigInt(-(2n ** 70n), -1n).map(String),
        nastyText(),
      ),
    ),
  },
);

const query: fc.Arbitrary<Part<string>> = fc.oneof(
  { weight: 3, arbitrary: valid('latest', fc.constant('')) },
  { weight: 8, arbitrary: version.map((v) => ({ ...v, value: `?ledger_version=${v.value}` })) },
  { weight: 1, arbitrary: version.map((v) => ({ ...v, value: `?other=1&ledger_version=${v.value}&x=%20` })) },
  {
    weight: 1,
    arbitrary: fc.tuple(version, version).map(([a, b]) => ({
      value: `?ledger_version=${a.value}&ledger_version=${b.value}`,
      valid: false,
      tag: 'dup-version',
    })),
  },
  {
    weight: 1,
    arbitrary: invalid(
      'odd-query',
      fc.constantFrom(
        '?',
        '?&&',
        '?ledger_version',
        '?ledger_version[]=900',
        '?ledger%5Fversion=900',
        '?ledger_version=900#frag',
        '?%ZZ',
        '?ledger_version=%ZZ',
        '?=&=',
      ),
    ),
  },
  { weight: 1, arbitrary: nastyText().map((t) => ({ value: '?' + t, valid: false, tag: 'random-query' })) },
);

// ---------------------------------------------------------------- headers

const ACCEPTS_VALID = [
  'application/x-bcs',
  'application/json',
  'application/json, application/x-bcs',
  'application/x-bcs, application/json',
  'application/x-bcs;q=0.5',
  'APPLICATION/X-BCS',
  'text/html, application/x-bcs',
  '*/*',
];
const accept: fc.Arbitrary<Part<string | undefined>> = fc.oneof(
  { weight: 8, arbitrary: valid('accept', fc.constantFrom<string | undefined>(...ACCEPTS_VALID, undefined)) },
  {
    weight: 2,
    arbitrary: valid(
      'accept-odd',
      fc.oneof(
        fc.constantFrom(
          '',
          ',,,',
          ';',
          'application/x-bcs;',
          ' application/x-bcs ',
          'application/x-bcs\t',
          'application/x-bcs;q=0',
          'application/*',
          'application/x-bcs,application/x-bcs',
          'application/jsonx, application/x-bcs',
          'application/x-bcsx',
        ),
        nastyText(40).map(asHeaderValue),
      ),
    ),
  },
);

const BCS_TYPE = 'application/x.node.view_function+bcs';
const CONTENT_TYPES_JSON = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json;',
  ' application/json',
];
const contentTypeFor = (kind: 'json' | 'bcs'): fc.Arbitrary<Part<string | undefined>> =>
  fc.oneof(
    {
      weight: 10,
      arbitrary: valid(
        'ctype',
        fc.constantFrom(
          ...(kind === 'json' ? CONTENT_TYPES_JSON : [BCS_TYPE, BCS_TYPE + '; x=1', BCS_TYPE.toUpperCase()]),
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: invalid(
        'bad-ctype',
        fc.oneof(
          fc.constantFrom<string | undefined>(
            undefined,
            '',
            'text/plain',
            'application/x-bcs',
            'application/x.aptos.view_function+bcs',
            'application/jsonx',
            'application/json,text/plain',
            'multipart/form-data; boundary=x',
            'application/x-www-form-urlencoded',
            kind === 'json' ? BCS_TYPE : 'application/json',
          ),
          nastyText(40).map(asHeaderValue),
        ),
      ),
    },
  );

// ---------------------------------------------------------------- JSON bodies

/** JSON values of every type, and the awkward ones: huge numbers, deep nesting, unicode. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -0, '', [], {}, [[]], '0x', 'null'),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Text-level JSON oddities that JSON.stringify cannot produce. */
const RAW_VALUES = [
  '1e400',
  '-1e400',
  '18446744073709551616',
  '123456789012345678901234567890',
  '1.0',
  '1E2',
  '0.0000001',
  '-0',
  '"\\ud800"',
  '"\\u0000"',
  '"\\uDFFF\\uD800"',
  '"é"',
  '"\\u00e9"',
];

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** A JSON object text with mutations applied at the text level. */
function mutateJsonText(text: string): fc.Arbitrary<Part<string>> {
  return fc.oneof(
    invalid(
      'truncated',
      fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((n) => text.slice(0, n)),
    ),
    invalid(
      'trailing',
      fc.constantFrom(',', '}', ']', ' x', '\u0000', '{}', '\n{"a":1}').map((t) => text + t),
    ),
    invalid(
      'inserted',
      fc
        .tuple(fc.integer({ min: 0, max: text.length }), nastyText(4))
        .map(([at, t]) => text.slice(0, at) + t + text.slice(at)),
    ),
    invalid(
      'deep',
      fc.integer({ min: 60, max: 2000 }).map((d) => text.replace(/\}$/, `,"deep":${nested(d)}}`)),
    ),
    invalid('dup-member', fc.constant(text.replace(/^\{("[a-z_]+":[^,}]*)/, '{$1,$1'))),
    invalid('bom', fc.constant('\ufeff' + text)),
    invalid('wrapped', fc.constantFrom(`[${text}]`, `"${text.replace(/"/g, '\\"')}"`, 'null', '0', '""', '[]')),
    valid(
      'spaced',
      fc
        .constantFrom<string | number>(' ', '\t', 2, '\r\n')
        .map((ws) => ` ${JSON.stringify(JSON.parse(text), null, ws)}\n`),
    ),
  );
}

function keyText(key: Buffer): fc.Arbitrary<Part<string>> {
  const hex = key.toString('hex');
  return fc.oneof(
    { weight: 6, arbitrary: valid('key', fc.constantFrom('0x' + hex, '0x' + hex.toUpperCase(), hex)) },
    {
      weight: 3,
      arbitrary: invalid(
        'bad-key',
        fc.constantFrom(
          '0X' + hex,
          '0x' + hex + '0',
          '0x' + hex.slice(1),
          'zz',
          '0xgg',
          ' 0x' + hex,
          '0x' + hex + ' ',
          '0x\u00e9',
          '\u{1F600}',
        ),
      ),
    },
    {
      weight: 1,
      arbitrary: valid(
        'long-key',
        hexDigits(0, 200).map((h) => '0x' + (h.length % 2 === 0 ? h : h + '0')),
      ),
    },
  );
}

const rawItemBody: fc.Arbitrary<Part<BodySpec>> = fc
  .tuple(fc.constantFrom(PRESENT_KEY, ABSENT_KEY, Buffer.from([1]), Buffer.alloc(0)), fc.nat())
  .chain(([key]) => keyText(key))
  .chain((k) => {
    const text = `{"key":${JSON.stringify(k.value)}}`;
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant({ value: text, valid: k.valid, tag: k.tag }) },
      {
        weight: 1,
        arbitrary: fc.constant({
          value: `{"key":${JSON.stringify(k.value)},"extra":[1,{"a":null}]}`,
          valid: k.valid,
          tag: 'extra-member',
        }),
      },
      {
        weight: 2,
        arbitrary: wrongValue.map((v) => ({
          value: JSON.stringify({ key: v }) ?? '{}',
          valid: false,
          tag: 'key-type',
        })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...RAW_VALUES).map((v) => ({ value: `{"key":${v}}`, valid: false, tag: 'key-raw' })),
      },
      {
        weight: 1,
        arbitrary: invalid('no-key', fc.constantFrom('{}', '{"Key":"0x01"}', '{"key ":"0x01"}', '{"keys":["0x01"]}')),
      },
      { weight: 3, arbitrary: mutateJsonText(text) },
    );
  })
  .map((p) => ({ ...p, value: { bytes: Buffer.from(p.value) } }));

const ADDRESS_FORMS = ['0x1', '0x01', SIM_MODULE_ADDRESS, '0x' + 'cd'.repeat(32), 'cd'.repeat(32), '0xCD'];
const U64_ARGS: unknown[] = ['0', '1', '40', '007', '18446744073709551615', 2, 40, 0];

interface ViewCall {
  function: string;
  type_arguments: unknown[];
  arguments: unknown[];
}

/** A well-formed call: the sim answers it 200, or 400 invalid_input (abort, out of gas, unknown). */
const viewCall: fc.Arbitrary<ViewCall> = fc.oneof(
  fc.constantFrom(...ADDRESS_FORMS).map((a) => ({ function: '0x1::sim::balance', type_arguments: [], arguments: [a] })),
  fc
    .tuple(fc.constantFrom(...U64_ARGS), fc.constantFrom(...U64_ARGS))
    .map(([a, b]) => ({ function: '0x1::sim::add', type_arguments: [], arguments: [a, b] })),
  fc.constantFrom(...U64_ARGS).map((a) => ({ function: '0x01::sim::pair', type_arguments: [], arguments: [a] })),
  fc
    .constantFrom(
      'u8',
      'vector<u8>',
      '0x1::string::String',
      'vector<0x1::coin::Coin<0x1::aptos_coin::AptosCoin>>',
      'address',
      'u256',
    )
    .map((t) => ({ function: '0x1::sim::type_name', type_arguments: [t], arguments: [] })),
  fc.constant<ViewCall>({ function: '0x1::sim::always_abort', type_arguments: [], arguments: [] }),
  fc
    .constantFrom('5', '1000001', '18446744073709551615')
    .map((n) => ({ function: '0x1::sim::burn', type_arguments: [], arguments: [n] })),
  fc
    .constantFrom('0x1::sim::poke', '0x1::sim::nope', '0x2::sim::balance', '0x1::other::balance', '0x1::Sim::balance')
    .map((f) => ({ function: f, type_arguments: [], arguments: [] })),
  fc.constant<ViewCall>({ function: '0x1::sim::add', type_arguments: ['u8'], arguments: ['1', '2'] }),
  fc.constant<ViewCall>({ function: '0x1::sim::add', type_arguments: [], arguments: ['1'] }),
);

const BAD_FUNCTIONS = [
  'sim::balance',
  '0x1::sim',
  '0x1::sim::',
  '::::',
  '0x1:sim:balance',
  '0x1::sim::balance::x',
  '0x1::1sim::balance',
  '0x1::sim::ba-lance',
  ' 0x1::sim::balance',
  '0x1 ::sim::balance',
  '0xg::sim::balance',
  '0x' + '1'.repeat(65) + '::sim::balance',
  '0x1::sim::balance\u0000',
  '0x1::sím::balance',
  '0x1::_::balance',
];
const BAD_TYPES = [
  '',
  ' ',
  'u7',
  'Vector<u8>',
  'vector<>',
  'vector<u8',
  'vector<u8>>',
  '0x1::a::B<u8,>',
  '0x1::a::B<>',
  '0x1::a',
  '0x1::a::',
  '<u8>',
  'u8 u8',
  'vector<vector<vector<vector<vector<vector<vector<vector<vector<u8>>>>>>>>>',
  '0x1::a::B<' + 'u8,'.repeat(40) + 'u8>',
  'signer<u8>',
  '\u{1F600}',
];

const viewJsonBody: fc.Arbitrary<Part<BodySpec>> = viewCall
  .chain((c) => {
    const text = JSON.stringify(c);
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant<Part<string>>({ value: text, valid: true, tag: 'view-json' }) },
      {
        weight: 1,
        arbitrary: fc.constant<Part<string>>({
          value: JSON.stringify({ arguments: c.arguments, type_arguments: c.type_arguments, function: c.function }),
          valid: true,
          tag: 'member-order',
        }),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...BAD_FUNCTIONS)
          .map((f) => ({ value: JSON.stringify({ ...c, function: f }), valid: false, tag: 'bad-function' })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...BAD_TYPES)
          .map((t) => ({ value: JSON.stringify({ ...c, type_arguments: [t] }), valid: false, tag: 'bad-type' })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom('function', 'type_arguments', 'arguments'), wrongValue)
          .map(([member, v]) => ({
            value: JSON.stringify({ ...c, [member]: v }),
            valid: false,
            tag: `wrong-${member}`,
          })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom('function', 'type_arguments', 'arguments').map((member) => ({
          value: JSON.stringify({ ...c, [member]: undefined }),
          valid: false,
          tag: `missing-${member}`,
        })),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...RAW_VALUES).map((v) => ({
          value: text.replace(/"arguments":\[[^\]]*\]/, `"arguments":[${v},${v}]`),
          valid: false,
          tag: 'arg-raw',
        })),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(wrongValue, { maxLength: 3 })
          .map((args) => ({ value: JSON.stringify({ ...c, arguments: args }), valid: false, tag: 'args-any' })),
      },
      {
        weight: 1,
        arbitrary: nastyText().map((t) => ({
          value: JSON.stringify({ ...c, function: c.function + t }),
          valid: false,
          tag: 'function-unicode',
        })),
      },
      { weight: 3, arbitrary: mutateJsonText(text) },
    );
  })
  .map((p) => ({ ...p, value: { bytes: Buffer.from(p.value) } }));

interface BcsCall {
  address: string;
  module: string;
  function: string;
  typeArgs: TypeTag[];
  args: Uint8Array[];
}

const bcsCall: fc.Arbitrary<BcsCall> = fc.oneof(
  fc.tuple(fc.bigInt(0n, 2n ** 64n - 1n), fc.bigInt(0n, 2n ** 64n - 1n)).map(([a, b]) => ({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'add',
    typeArgs: [],
    args: [u64le(a), u64le(b)],
  })),
  fc.constant<BcsCall>({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'balance',
    typeArgs: [],
    args: [Buffer.alloc(32, 0xcd)],
  }),
  fc.constant<BcsCall>({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'pair',
    typeArgs: [],
    args: [u64le(7n)],
  }),
  fc.constant<BcsCall>({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'type_name',
    typeArgs: [{ kind: 'vector', of: { kind: 'u8' } }],
    args: [],
  }),
  fc.constant<BcsCall>({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'always_abort',
    typeArgs: [],
    args: [],
  }),
  fc.constant<BcsCall>({
    address: SIM_MODULE_ADDRESS,
    module: 'sim',
    function: 'balance',
    typeArgs: [],
    args: [Buffer.alloc(31, 0xcd)],
  }),
  fc.constant<BcsCall>({
    address: '0x' + '2'.padStart(64, '0'),
    module: 'sim',
    function: 'nope',
    typeArgs: [],
    args: [],
  }),
);

const viewBcsBody: fc.Arbitrary<Part<BodySpec>> = bcsCall
  .chain((c) => {
    const bytes = Buffer.from(encodeViewRequest(c));
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant({ value: bytes, valid: true, tag: 'view-bcs' }) },
      {
        weight: 2,
        arbitrary: invalid(
          'bcs-truncated',
          fc.integer({ min: 0, max: bytes.length - 1 }).map((n) => bytes.subarray(0, n)),
        ),
      },
      {
        weight: 2,
        arbitrary: invalid(
          'bcs-extra',
          fc.uint8Array({ minLength: 1, maxLength: 8 }).map((x) => Buffer.concat([bytes, x])),
        ),
      },
      {
        weight: 2,
        arbitrary: invalid(
          'bcs-flip',
          fc.tuple(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, v]) => {
            const out = Buffer.from(bytes);
            out[at] = v;
            return out;
          }),
        ),
      },
      // A length prefix (the module name's, right after the address) made huge.
      {
        weight: 1,
        arbitrary: invalid(
          'bcs-huge-length',
          fc
            .constantFrom(
              Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
              Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
            )
            .map((len) => Buffer.concat([bytes.subarray(0, 32), len, bytes.subarray(33)])),
        ),
      },
      {
        weight: 1,
        arbitrary: invalid(
          'bcs-random',
          fc.uint8Array({ maxLength: 120 }).map((x) => Buffer.from(x)),
        ),
      },
    );
  })
  .map((p) => ({ ...p, value: { bytes: p.value } }));

/** Bodies unrelated to the endpoint: random bytes, random JSON, deep nesting, nothing. */
const junkBody: fc.Arbitrary<Part<BodySpec | undefined>> = fc.oneof(
  invalid('no-body', fc.constant(undefined)),
  invalid('empty-body', fc.constant({ bytes: Buffer.alloc(0) })),
  invalid(
    'random-bytes',
    fc.uint8Array({ maxLength: 300 }).map((b) => ({ bytes: Buffer.from(b) })),
  ),
  invalid(
    'random-text',
    nastyText(200).map((t) => ({ bytes: Buffer.from(t) })),
  ),
  invalid(
    'random-json',
    fc.json({ maxDepth: 4 }).map((t) => ({ bytes: Buffer.from(t) })),
  ),
  invalid(
    'deep-json',
    fc
      .tuple(fc.integer({ min: 10, max: 5000 }), fc.constantFrom('[', '{"a":'))
      .map(([d, open]) => ({ bytes: Buffer.from(open.repeat(d) + '1' + (open === '[' ? ']' : '}').repeat(d)) })),
  ),
);

/** Bodies around the 8 MiB limit: valid JSON padded with spaces. Built at send time. */
const sizedBody = (json: string): fc.Arbitrary<Part<BodySpec>> =>
  fc
    .constantFrom(BODY_LIMIT - 1, BODY_LIMIT, BODY_LIMIT + 1, BODY_LIMIT + 4096)
    .map((padTo) => ({ value: { padTo, json }, valid: padTo <= BODY_LIMIT, tag: `size-${padTo - BODY_LIMIT}` }));

// ---------------------------------------------------------------- requests

function combine(
  endpoint: Endpoint | null,
  method: Part<string>,
  path: Part<string>,
  headers: Array<[string, Part<string | undefined>]>,
  body: Part<BodySpec | undefined>,
): FuzzRequest {
  const parts: Array<Part<unknown>> = [method, path, ...headers.map(([, h]) => h), body];
  const out: Record<string, string> = {};
  for (const [name, h] of headers) if (h.value !== undefined) out[name] = h.value;
  return {
    method: method.value,
    path: path.value,
    headers: out,
    body: body.value,
    endpoint,
    valid: parts.every((p) => p.valid),
    tags: parts.map((p) => p.tag).filter((t) => t !== ''),
  };
}

const post: fc.Arbitrary<Part<string>> = fc.oneof(
  { weight: 30, arbitrary: valid('', fc.constant('POST')) },
  {
    weight: 1,
    arbitrary: invalid('method', fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'post')),
  },
);

/** Served-path mutations that change which route matches. */
const routeVariant = (path: string): fc.Arbitrary<Part<string>> =>
  fc.oneof(
    { weight: 30, arbitrary: valid('', fc.constant(path)) },
    {
      weight: 1,
      arbitrary: invalid(
        'route',
        fc.constantFrom(
          path + '/',
          path.replace('/v1/', '/v1//'),
          path.replace('/v1/', '/V1/'),
          path.replace('/v1/', '/v1/./'),
          path.replace('/v1/', '/v1/x/../'),
          path + ';x',
          path + '/extra',
          path.replace('/v1/', '/v1/%2e%2e/v1/'),
          path.replace('/v1/', '/v2/'),
        ),
      ),
    },
  );

/** Only the valid draws of a part: about a third of the requests are built from these. */
const good = <T>(arb: fc.Arbitrary<Part<T>>): fc.Arbitrary<Part<T>> => arb.filter((p) => p.valid);
const either = <T>(clean: boolean, arb: fc.Arbitrary<Part<T>>): fc.Arbitrary<Part<T>> => (clean ? good(arb) : arb);

const rawItemRequestOf = (clean: boolean): fc.Arbitrary<FuzzRequest> =>
  fc
    .record({
      method: either(clean, post),
      handle: either(clean, handle),
      query: either(clean, query),
      accept,
      ctype: either(clean, contentTypeFor('json')),
      body: clean
        ? good(rawItemBody)
        : fc.oneof({ weight: 12, arbitrary: rawItemBody }, { weight: 2, arbitrary: junkBody }),
    })
    .chain((r) =>
      either(
        clean,
        routeVariant(
          `/v1/tables/${encodePathBytes(r.handle.value).replace(/[/?#]/g, (c) => encodeURIComponent(c))}/raw_item`,
        ),
      ).map((route) =>
        combine(
          'raw_item',
          r.method,
          {
            value: route.value + encodePathBytes(r.query.value),
            valid: route.valid && r.handle.valid && r.query.valid,
            tag: [route.tag, r.handle.tag, r.query.tag].join('+'),
          },
          [
            ['accept', r.accept],
            ['content-type', r.ctype],
          ],
          r.body,
        ),
      ),
    );

const viewRequestOf = (clean: boolean): fc.Arbitrary<FuzzRequest> =>
  fc
    .record({
      method: either(clean, post),
      query: either(clean, query),
      accept,
      json: fc.boolean(),
      jsonCtype: either(clean, contentTypeFor('json')),
      bcsCtype: either(clean, contentTypeFor('bcs')),
      jsonBody: clean
        ? good(viewJsonBody)
        : fc.oneof({ weight: 12, arbitrary: viewJsonBody }, { weight: 2, arbitrary: junkBody }),
      bcsBody: clean
        ? good(viewBcsBody)
        : fc.oneof({ weight: 12, arbitrary: viewBcsBody }, { weight: 2, arbitrary: junkBody }),
    })
    .chain((r) =>
      either(clean, routeVariant('/v1/view')).map((route) =>
        combine(
          'view',
          r.method,
          {
            value: route.value + encodePathBytes(r.query.value),
            valid: route.valid && r.query.valid,
            tag: [route.tag, r.query.tag].join('+'),
          },
          [
            ['accept', r.accept],
            ['content-type', r.json ? r.jsonCtype : r.bcsCtype],
          ],
          r.json ? r.jsonBody : r.bcsBody,
        ),
      ),
    );

const rawItemRequest = fc.oneof(
  { weight: 1, arbitrary: rawItemRequestOf(true) },
  { weight: 2, arbitrary: rawItemRequestOf(false) },
);
const viewRequest = fc.oneof(
  { weight: 1, arbitrary: viewRequestOf(true) },
  { weight: 2, arbitrary: viewRequestOf(false) },
);

/** Rare, and built at send time: bodies around the 8 MiB limit, for both endpoints. */
const oversizedRequest: fc.Arbitrary<FuzzRequest> = fc.boolean().chain((isView) => {
  const json = isView
    ? JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['2', '40'] })
    : `{"key":"0x${PRESENT_KEY.toString('hex')}"}`;
  return sizedBody(json).map((body) =>
    combine(
      isView ? 'view' : 'raw_item',
      { value: 'POST', valid: true, tag: '' },
      {
        value: isView ? '/v1/view?ledger_version=900' : `/v1/tables/${HANDLE}/raw_item?ledger_version=900`,
        valid: true,
        tag: 'sized',
      },
      [
        ['accept', { value: 'application/x-bcs', valid: true, tag: '' }],
        ['content-type', { value: 'application/json', valid: true, tag: '' }],
      ],
      body,
    ),
  );
});

const OTHER_PATHS = [
  '/',
  '/v1',
  '/v1/',
  '/v2/view',
  '/metrics',
  '/healthz',
  '/v1x/view',
  '/v1/accounts/0x1/module/sim',
  '/v1/accounts/0x1/resources',
  '/v1/transactions',
  '/v1/blocks/by_height/1',
  '/v1/tables/0x1',
  '/v1/tables/0x1/item',
  '/v1/view/x',
  '/v1/spec',
  '/v1/-/healthy',
  '/favicon.ico',
  '/v1/accounts/%2e%2e/module/sim',
  '/v1/%2e%2e/metrics',
  '/v1/..%2f..%2fetc/passwd',
  '/v1%2fview',
  '/v1/%ZZ',
  '/v1?x=%ZZ',
  '/v1/accounts/0x1/module/sim?ledger_version=abc',
];

/** Any other path, under /v1 (passed through to a node) and not. */
const otherRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
    path: fc.oneof(
      fc.constantFrom(...OTHER_PATHS),
      fc
        .array(nastyText(12), { minLength: 1, maxLength: 5 })
        .map(
          (segs) =>
            '/v1/' + segs.map((s) => encodePathBytes(s).replace(/[/?#]/g, (c) => encodeURIComponent(c))).join('/'),
        ),
      fc.array(nastyText(12), { maxLength: 4 }).map((segs) => '/' + segs.map((s) => encodePathBytes(s)).join('/')),
    ),
    accept,
    ctype: contentTypeFor('json'),
    body: junkBody,
  })
  .map((r) =>
    combine(
      null,
      { value: r.method, valid: false, tag: 'other' },
      { value: r.path, valid: false, tag: '' },
      [
        ['accept', r.accept],
        ['content-type', r.ctype],
      ],
      r.method === 'GET' || r.method === 'HEAD' ? { value: undefined, valid: true, tag: '' } : r.body,
    ),
  );

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 120, arbitrary: rawItemRequest },
  { weight: 120, arbitrary: viewRequest },
  { weight: 36, arbitrary: otherRequest },
  // about one case in 280: two 8 MiB bodies each (to the proxy and to the sim)
  { weight: 1, arbitrary: oversizedRequest },
);
