// Every error path of SPEC §3 and §5 through the proxy: exact statuses and error
// bodies, ledger headers only where SPEC says so, and the sim's counters proving
// that bad input never reached the node.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simTableItem, SIM_MODULE_ADDRESS, VM_ABORTED, VM_OUT_OF_GAS, type SimNode } from '../../src/sim/index.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { call, HANDLE, ledgerHeaders, proxy, rawItem, sim, viewJson, type Reply, QUIET } from '../helpers/proxy.js';
import { simHeaders } from '../helpers/expect.js';
import { rawHttp, type RawReply } from '../helpers/raw-socket.js';
import { hex, u64le, served } from '../helpers/cache.js';

const KEYS = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 7]));
const PRESENT = KEYS.find((k) => simTableItem(HANDLE, k, 0n) !== null)!;
const ABSENT = KEYS.find((k) => simTableItem(HANDLE, k, 0n) === null)!;

const API_DISABLED = { message: 'Only BCS is supported as an AcceptType.', error_code: 'api_disabled', vm_error_code: null };

/** A reply's error body, after checking it is exactly SPEC §5's shape. */
function errorOf(reply: Reply, status: number, label = ''): { message: string; error_code: string; vm_error_code: number | null } {
  expect(reply.status, `${label} status (body ${reply.body.toString()})`).toBe(status);
  expect(reply.headers['content-type'], `${label} content-type`).toBe('application/json');
  const body = reply.json();
  expect(Object.keys(body).sort(), `${label} body members`).toEqual(['error_code', 'message', 'vm_error_code']);
  expect(typeof body.message, `${label} message`).toBe('string');
  return body;
}

/** 400 web_framework_error with `messagePart` in the message and no ledger headers. */
function expectInputError(reply: Reply, messagePart: string | RegExp, label = ''): void {
  const body = errorOf(reply, 400, label);
  expect(body.error_code, label).toBe('web_framework_error');
  expect(body.vm_error_code, label).toBeNull();
  if (typeof messagePart === 'string') expect(body.message, label).toContain(messagePart);
  else expect(body.message, label).toMatch(messagePart);
  expect(ledgerHeaders(reply), `${label} must carry no ledger headers`).toEqual({});
}

// Probes only at start, so the proxy learns of pruning from answers alone.

async function setup(overrides: Record<string, unknown> = {}): Promise<{ node: SimNode; url: string }> {
  const node = await sim();
  const { url } = await proxy([node], { ...QUIET, ...overrides });
  return { node, url };
}

function rawItemBody(url: string, body: string | Buffer, headers: Record<string, string>, path = `/v1/tables/${HANDLE}/raw_item`): Promise<Reply> {
  return call(url, path, { method: 'POST', headers, body });
}

function view(url: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }, query = ''): Promise<Reply> {
  return call(url, `/v1/view${query}`, { method: 'POST', headers, body });
}

describe('proxy errors: raw_item', () => {
  it('bad table handles → 400 web_framework_error, no ledger headers, node not called', async () => {
    const { node, url } = await setup();
    const handles = [
      '0x',
      '0x' + '1'.repeat(65),
      '1'.repeat(63), // without 0x: exactly 64 digits
      '1'.repeat(65),
      '0xzz',
      '0x12g4',
      'ab'.repeat(31) + 'xy',
      '0x1%2F2', // encoded slash: one segment that decodes to 0x1/2
      '0x%2F',
      '%2F' + 'ab'.repeat(32),
      '0x1%20',
      '-0x1',
      '0X1',
      // Longer than any router parameter limit: still this route's 400, never passed through to a node.
      '0x' + '1'.repeat(600),
      'a'.repeat(5000),
    ];
    for (const handle of handles) {
      const reply = await rawItem(url, hex(PRESENT), { handle });
      expectInputError(reply, 'table_handle', `handle ${handle}`);
    }
    expect(node.counters.byRoute.raw_item).toBe(0);
    expect(served(node)).toBe(0);
  });

  it('ledger_version that is not a u64 → 400, no ledger headers, node not called', async () => {
    const { node, url } = await setup();
    const versions = ['-1', '%2B5', '+5', '1.0', 'abc', '18446744073709551616', '', '0x10', '1e3', '%201'];
    for (const v of versions) {
      const reply = await rawItem(url, hex(PRESENT), { version: v });
      expectInputError(reply, 'ledger_version', `ledger_version=${v}`);
    }
    // Given twice: not one u64 either.
    const twice = await call(url, `/v1/tables/${HANDLE}/raw_item?ledger_version=1&ledger_version=2`, {
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: JSON.stringify({ key: hex(PRESENT) }),
    });
    expectInputError(twice, 'ledger_version', 'ledger_version twice');
    expect(served(node)).toBe(0);
    // The largest u64 is one (the node has not reached it).
    const max = await rawItem(url, hex(PRESENT), { version: '18446744073709551615' });
    expect(errorOf(max, 404).error_code).toBe('version_not_found');
  });

  it('wrong or missing content type → 400 naming the content type, node not called', async () => {
    const { node, url } = await setup();
    const body = JSON.stringify({ key: hex(PRESENT) });
    const cases: Array<Record<string, string>> = [
      { accept: 'application/x-bcs' }, // none
      { 'content-type': 'text/plain', accept: 'application/x-bcs' },
      { 'content-type': 'application/x-bcs', accept: 'application/x-bcs' },
      { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/x-bcs' },
      { 'content-type': 'application/jsonx', accept: 'application/x-bcs' },
    ];
    for (const headers of cases) {
      const reply = await rawItemBody(url, body, headers);
      expectInputError(reply, 'content type', `content-type ${headers['content-type'] ?? '(none)'}`);
    }
    // Parameters are fine.
    const withCharset = await rawItemBody(url, body, { 'content-type': 'application/json; charset=utf-8', accept: 'application/x-bcs' });
    expect(withCharset.status).toBe(200);
    expect(withCharset.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('malformed JSON, missing key, bad hex → 400 web_framework_error, node not called', async () => {
    const { node, url } = await setup();
    const headers = { 'content-type': 'application/json', accept: 'application/x-bcs' };
    const cases: Array<[string, string]> = [
      ['{"key":', 'malformed JSON'],
      ['{"key":"0x01"', 'malformed JSON'],
      ["{'key':'0x01'}", 'malformed JSON'],
      ['', 'malformed JSON'],
      ['{"key":"0x01"} x', 'malformed JSON'],
      ['{"key":"0x01","key":"0x02"}', 'malformed JSON'],
      ['[]', 'must be an object'],
      ['"0x01"', 'must be an object'],
      ['null', 'must be an object'],
      ['{}', 'missing string member "key"'],
      ['{"Key":"0x01"}', 'missing string member "key"'],
      ['{"key":1}', 'missing string member "key"'],
      ['{"key":null}', 'missing string member "key"'],
      ['{"key":["0x01"]}', 'missing string member "key"'],
      ['{"key":"0x0"}', '"key" is not hex bytes'],
      ['{"key":"0x0g"}', '"key" is not hex bytes'],
      ['{"key":"zz"}', '"key" is not hex bytes'],
      ['{"key":"0x 01"}', '"key" is not hex bytes'],
      ['{"key":"0X01"}', '"key" is not hex bytes'],
    ];
    for (const [body, part] of cases) {
      expectInputError(await rawItemBody(url, body, headers), part, `body ${body}`);
    }
    // Input errors win over the Accept check (403), as on a node.
    expectInputError(await rawItemBody(url, '{}', { 'content-type': 'application/json', accept: 'application/json' }), 'missing string member "key"', 'json accept');
    expect(served(node)).toBe(0);
  });

  it('a JSON body that is not valid UTF-8, or starts with a BOM → 400, node not called (nodes refuse them)', async () => {
    const { node, url } = await setup();
    const headers = { 'content-type': 'application/json', accept: 'application/x-bcs' };
    const valid = JSON.stringify({ key: hex(PRESENT), note: '\ufffd' });
    // Served and cached when valid...
    const ok = await rawItemBody(url, valid, headers, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`);
    expect(ok.status).toBe(200);
    expect(node.counters.byRoute.raw_item).toBe(1);
    // ...but the same bytes with a raw 0xff where U+FFFD was are no request a node takes.
    const invalid = Buffer.concat([Buffer.from(`{"key":"${hex(PRESENT)}","note":"`), Buffer.from([0xff]), Buffer.from('"}')]);
    const bad = await rawItemBody(url, invalid, headers, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`);
    expectInputError(bad, 'not valid UTF-8');
    const badLatest = await rawItemBody(url, invalid, headers);
    expectInputError(badLatest, 'not valid UTF-8');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid)]);
    expectInputError(await rawItemBody(url, bom, headers), 'malformed JSON', 'BOM');
    const viewBody = Buffer.concat([Buffer.from('{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"],"x":"'), Buffer.from([0xc3]), Buffer.from('"}')]);
    expectInputError(await view(url, viewBody), 'not valid UTF-8', 'view');
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.byRoute.view).toBe(0);
  });

  it('a body over server.bodyLimitBytes → 400 (never 413), node not called', async () => {
    const { node, url } = await setup({ server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 1024 } });
    const big = JSON.stringify({ key: '0x' + 'ab'.repeat(1000) });
    expect(big.length).toBeGreaterThan(1024);
    const reply = await rawItemBody(url, big, { 'content-type': 'application/json', accept: 'application/x-bcs' });
    expectInputError(reply, 'larger than the limit of 1024 bytes');
    // Also without a content type, and on view.
    expectInputError(await rawItemBody(url, big, { accept: 'application/x-bcs' }), /larger than the limit of 1024 bytes|content type/, 'no content type');
    expectInputError(await view(url, Buffer.alloc(2048, 0x20)), 'larger than the limit of 1024 bytes', 'view');
    // A chunked body has no length to check up front: refused as it passes the limit, with a reply.
    const chunks = Array.from({ length: 200 }, () => Buffer.alloc(1000, 0x20));
    const chunked = await call(url, `/v1/tables/${HANDLE}/raw_item`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: Readable.from(chunks) as unknown as Buffer,
    });
    expectInputError(chunked, 'larger than the limit of 1024 bytes', 'chunked');
    // Just under the limit is served.
    const fits = JSON.stringify({ key: '0x' + 'ab'.repeat(500) });
    expect(fits.length).toBeLessThanOrEqual(1024);
    const ok = await rawItemBody(url, fits, { 'content-type': 'application/json', accept: 'application/x-bcs' });
    expect([200, 404]).toContain(ok.status);
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.byRoute.view).toBe(0);
  });

  it('Accept json / missing / */* / other → 403 api_disabled without ledger headers, node not called', async () => {
    const { node, url } = await setup();
    const body = JSON.stringify({ key: hex(PRESENT) });
    const accepts: Array<string | undefined> = ['application/json', undefined, '*/*', 'text/html', 'application/*', 'application/json, application/x-bcs', 'application/json;q=0.1, application/x-bcs'];
    for (const accept of accepts) {
      for (const version of ['', '?ledger_version=1000']) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (accept !== undefined) headers.accept = accept;
        const reply = await rawItemBody(url, body, headers, `/v1/tables/${HANDLE}/raw_item${version}`);
        const label = `accept ${accept ?? '(none)'} ${version}`;
        expect(errorOf(reply, 403, label), label).toEqual(API_DISABLED);
        expect(ledgerHeaders(reply), label).toEqual({});
      }
    }
    expect(served(node)).toBe(0);
    // The first of the two that appears wins, parameters ignored.
    const bcsFirst = await rawItem(url, hex(PRESENT), { accept: 'text/plain, application/x-bcs;q=0.5, application/json' });
    expect(bcsFirst.status).toBe(200);
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('N > latest → 404 version_not_found from the node, with ledger headers, not cached', async () => {
    const { node, url } = await setup();
    const reply = await rawItem(url, hex(PRESENT), { version: 1005 });
    expect(errorOf(reply, 404)).toEqual({
      message: 'Ledger version(1005) not found, latest version is 1000',
      error_code: 'version_not_found',
      vm_error_code: null,
    });
    expect(ledgerHeaders(reply)).toEqual(simHeaders(1000n, 0n));
    expect(reply.headers['x-cache']).not.toBe('HIT');
    expect(node.counters.byRoute.raw_item).toBe(1);

    // Retriable: not cached, and once the node reaches N it answers.
    node.ledger.advance(10);
    const later = await rawItem(url, hex(PRESENT), { version: 1005 });
    expect(later.status).toBe(200);
    expect(later.headers['content-type']).toBe('application/x-bcs');
    expect(later.body).toEqual(simTableItem(HANDLE, PRESENT, 1005n));
    expect(node.counters.byRoute.raw_item).toBe(2);
  });

  it('N < oldest → 410 version_pruned with ledger headers; the node is not asked again once the proxy knows', async () => {
    const { node, url } = await setup();
    node.ledger.advance(100); // latest 1100
    // Cached before the prune.
    const early = await rawItem(url, hex(PRESENT), { version: 1040 });
    expect(early.status).toBe(200);
    expect(early.body).toEqual(simTableItem(HANDLE, PRESENT, 1040n));
    expect(node.counters.byRoute.raw_item).toBe(1);

    // Pruning comes with new versions on a real node (see the report: a prune at the
    // same latest version does not reach the proxy's watermark).
    node.ledger.advance(10); // latest 1110
    node.ledger.pruneTo(1050n);
    const pruned410 = {
      message: 'Ledger version(1000) has been pruned',
      error_code: 'version_pruned',
      vm_error_code: null,
    };
    // The proxy still believes the node holds 1000: the node says 410.
    const first = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(errorOf(first, 410)).toEqual(pruned410);
    expect(ledgerHeaders(first)).toEqual(simHeaders(1110n, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(2);

    // Now it knows: 410 from the proxy, the node not called, cached or not.
    const again = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(errorOf(again, 410)).toEqual(pruned410);
    expect(ledgerHeaders(again)).toEqual(simHeaders(1110n, 1050n));
    const other = await rawItem(url, hex(ABSENT), { version: 1049, handle: '0x' + 'AB'.repeat(32) });
    expect(errorOf(other, 410)).toEqual({ ...pruned410, message: 'Ledger version(1049) has been pruned' });
    const cached = await rawItem(url, hex(PRESENT), { version: 1040 });
    expect(errorOf(cached, 410)).toEqual({ ...pruned410, message: 'Ledger version(1040) has been pruned' });
    expect(ledgerHeaders(cached)).toEqual(simHeaders(1110n, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(2);

    // The oldest version itself is still served.
    const oldest = await rawItem(url, hex(PRESENT), { version: 1050 });
    expect(oldest.status).toBe(200);
    expect(oldest.body).toEqual(simTableItem(HANDLE, PRESENT, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(3);
  });

  it('absent item → 404 table_item_not_found with ledger headers (deterministic, so cached when pinned)', async () => {
    const { node, url } = await setup();
    const expected = {
      message: `Table Item not found by Table handle(${HANDLE}), Table key(${hex(ABSENT)}) and Ledger version(1000)`,
      error_code: 'table_item_not_found',
      vm_error_code: null,
    };
    const latest = await rawItem(url, hex(ABSENT));
    expect(errorOf(latest, 404)).toEqual(expected);
    expect(ledgerHeaders(latest)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.raw_item).toBe(1);

    const pinned = await rawItem(url, hex(ABSENT), { version: 990 });
    expect(errorOf(pinned, 404)).toEqual({ ...expected, message: expected.message.replace('(1000)', '(990)') });
    expect(ledgerHeaders(pinned)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.raw_item).toBe(2);
    const hit = await rawItem(url, hex(ABSENT), { version: 990 });
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.body).toEqual(pinned.body);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});

describe('proxy errors: view', () => {
  const addBody = (fn: unknown, typeArgs: unknown = [], args: unknown = ['1', '2']): string => JSON.stringify({ function: fn, type_arguments: typeArgs, arguments: args });

  it('malformed function ids → 400 web_framework_error, node not called', async () => {
    const { node, url } = await setup();
    const ids: unknown[] = [
      '0x1::sim',
      '0x1::sim::',
      '::sim::add',
      'sim::add',
      '0x1::sim::add::x',
      '0xzz::sim::add',
      '0x' + '1'.repeat(65) + '::sim::add',
      '0x1::1sim::add',
      '0x1::sim::add-2',
      '0x1:sim:add',
      '',
      5,
      null,
      ['0x1::sim::add'],
    ];
    for (const id of ids) {
      expectInputError(await view(url, addBody(id)), '"function"', `function ${JSON.stringify(id)}`);
    }
    expect(node.counters.byRoute.view).toBe(0);
    expect(served(node)).toBe(0);
  });

  it('missing or mistyped members → 400, node not called', async () => {
    const { node, url } = await setup();
    const cases: Array<[string, string]> = [
      [JSON.stringify({ type_arguments: [], arguments: [] }), '"function"'],
      [JSON.stringify({ function: '0x1::sim::add', arguments: ['1', '2'] }), '"type_arguments"'],
      [JSON.stringify({ function: '0x1::sim::add', type_arguments: [] }), '"arguments"'],
      [JSON.stringify({ function: '0x1::sim::add', type_arguments: 'u64', arguments: [] }), '"type_arguments"'],
      [JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: '1,2' }), '"arguments"'],
      [JSON.stringify({ function: '0x1::sim::add', type_arguments: null, arguments: [] }), '"type_arguments"'],
      ['{}', '"function"'],
      ['[]', 'must be an object'],
      ['{"function":"0x1::sim::add",', 'malformed JSON'],
      ['', 'malformed JSON'],
    ];
    for (const [body, part] of cases) expectInputError(await view(url, body), part, `body ${body}`);
    expect(served(node)).toBe(0);
  });

  it('bad type arguments → 400, node not called', async () => {
    const { node, url } = await setup();
    const bad: unknown[] = ['u7', 'vector<u8', 'vector<>', '0x1::string', '0x1::string::', 'U64', '', 5, null, '0x1::a::B<', 'u64 u64'];
    for (const t of bad) {
      expectInputError(await view(url, addBody('0x1::sim::type_name', [t], [])), 'type_arguments[0]', `type ${JSON.stringify(t)}`);
    }
    expect(served(node)).toBe(0);
  });

  it('a bad BCS body → 400, node not called', async () => {
    const { node, url } = await setup();
    const bcs = { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' };
    const good = Buffer.from(encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: 'add', typeArgs: [], args: [u64le(1n), u64le(2n)] }));
    const bodies: Array<[string, Buffer]> = [
      ['empty', Buffer.alloc(0)],
      ['two bytes', Buffer.from([1, 2])],
      ['truncated', good.subarray(0, good.length - 3)],
      ['trailing byte', Buffer.concat([good, Buffer.from([0])])],
      ['json', Buffer.from(addBody('0x1::sim::add'))],
      ['bad function name', Buffer.from(encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: 'add', typeArgs: [], args: [] })).fill(0x2d, 37, 38)],
    ];
    for (const [label, body] of bodies) {
      expectInputError(await view(url, body, bcs), 'not a BCS view function request', label);
    }
    expect(served(node)).toBe(0);
    // The good one is served.
    const ok = await view(url, good, bcs);
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual(['3']);
    expect(node.counters.byRoute.view).toBe(1);
  });

  it('wrong content type → 400, node not called', async () => {
    const { node, url } = await setup();
    const body = addBody('0x1::sim::add');
    const types: Array<string | undefined> = [undefined, 'text/plain', 'application/x-bcs', 'application/x.aptos.view_function+bcs', 'application/x-www-form-urlencoded'];
    for (const type of types) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (type !== undefined) headers['content-type'] = type;
      expectInputError(await view(url, body, headers), 'content type', `content-type ${type ?? '(none)'}`);
    }
    expect(served(node)).toBe(0);
  });

  it('ledger_version that is not a u64 → 400, node not called', async () => {
    const { node, url } = await setup();
    for (const v of ['-1', '%2B5', '1.0', 'abc', '18446744073709551616', '']) {
      expectInputError(await view(url, addBody('0x1::sim::add'), undefined, `?ledger_version=${v}`), 'ledger_version', v);
    }
    expect(served(node)).toBe(0);
  });

  it('unknown function or module → 400 invalid_input from the node, with ledger headers', async () => {
    const { node, url } = await setup();
    const fn = await viewJson(url, '0x1::sim::nope', []);
    expect(errorOf(fn, 400)).toEqual({ message: 'Function 0x1::sim::nope not found', error_code: 'invalid_input', vm_error_code: null });
    expect(ledgerHeaders(fn)).toEqual(simHeaders(1000n, 0n));
    const mod = await viewJson(url, '0x2::nosuch::f', []);
    expect(errorOf(mod, 400)).toEqual({
      message: `Module 0x${'2'.padStart(64, '0')}::nosuch not found`,
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    // A function that is not a view.
    const entry = await viewJson(url, '0x1::sim::poke', []);
    expect(errorOf(entry, 400)).toEqual({ message: 'Function 0x1::sim::poke is not a view function', error_code: 'invalid_input', vm_error_code: null });
    // Wrong arity is the node's call.
    const arity = await viewJson(url, '0x1::sim::add', ['1']);
    expect(errorOf(arity, 400)).toEqual({
      message: 'Wrong number of arguments for 0x1::sim::add: expected 2, got 1',
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    expect(node.counters.byRoute.view).toBe(4);
  });

  it('always_abort → 400 invalid_input vm_error_code 4016 (cached when pinned)', async () => {
    const { node, url } = await setup();
    const expected = { message: 'Move abort in 0x1::sim::always_abort: ABORTED with code 0x1', error_code: 'invalid_input', vm_error_code: VM_ABORTED };
    const latest = await viewJson(url, '0x1::sim::always_abort', []);
    expect(errorOf(latest, 400)).toEqual(expected);
    expect(latest.headers['x-node-gas-used']).toBeUndefined();
    expect(ledgerHeaders(latest)).toEqual(simHeaders(1000n, 0n));
    const pinned = await viewJson(url, '0x1::sim::always_abort', [], { version: 999 });
    expect(errorOf(pinned, 400)).toEqual(expected);
    expect(pinned.headers['x-cache']).toBe('MISS');
    const hit = await viewJson(url, '0x1::sim::always_abort', [], { version: 999 });
    expect(errorOf(hit, 400)).toEqual(expected);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(ledgerHeaders(hit)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('burn(2000000) → 400 invalid_input vm_error_code 4002, never cached', async () => {
    const { node, url } = await setup();
    const expected = { message: 'Move abort in 0x1::sim::burn: OUT_OF_GAS', error_code: 'invalid_input', vm_error_code: VM_OUT_OF_GAS };
    for (let i = 1; i <= 2; i++) {
      const pinned = await viewJson(url, '0x1::sim::burn', ['2000000'], { version: 999 });
      expect(errorOf(pinned, 400)).toEqual(expected);
      expect(pinned.headers['x-cache']).toBe('MISS');
      expect(ledgerHeaders(pinned)).toEqual(simHeaders(1000n, 0n));
      expect(node.counters.byRoute.view).toBe(i);
    }
    // Under the limit it is an answer.
    const ok = await viewJson(url, '0x1::sim::burn', ['1000000'], { version: 999 });
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual(['1000000']);
  });

  it('N > latest → 404 version_not_found; N < oldest → 410 version_pruned (then without the node)', async () => {
    const { node, url } = await setup();
    const future = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 2000 });
    expect(errorOf(future, 404)).toEqual({ message: 'Ledger version(2000) not found, latest version is 1000', error_code: 'version_not_found', vm_error_code: null });
    expect(ledgerHeaders(future)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.view).toBe(1);

    node.ledger.advance(500);
    node.ledger.pruneTo(1200n);
    const pruned = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 1100 });
    expect(errorOf(pruned, 410)).toEqual({ message: 'Ledger version(1100) has been pruned', error_code: 'version_pruned', vm_error_code: null });
    expect(ledgerHeaders(pruned)).toEqual(simHeaders(1500n, 1200n));
    expect(node.counters.byRoute.view).toBe(2);
    const again = await viewJson(url, '0x1::sim::balance', ['0x1'], { version: 7 });
    expect(errorOf(again, 410)).toEqual({ message: 'Ledger version(7) has been pruned', error_code: 'version_pruned', vm_error_code: null });
    expect(ledgerHeaders(again)).toEqual(simHeaders(1500n, 1200n));
    expect(node.counters.byRoute.view).toBe(2);
  });
});

describe('proxy errors: routes and malformed HTTP', () => {
  it('an unknown route → 404 JSON error body, not HTML, node not called', async () => {
    const { node, url } = await setup();
    const cases: Array<['GET' | 'POST', string]> = [
      ['GET', '/nowhere'],
      ['GET', '/'],
      ['POST', '/v2/view'],
      ['GET', '/index.html'],
      ['POST', '/v1x/view'],
    ];
    for (const [method, path] of cases) {
      const reply = await call(url, path, { method, headers: { 'content-type': 'application/json', accept: 'text/html' }, body: method === 'POST' ? '{}' : undefined });
      const body = errorOf(reply, 404, `${method} ${path}`);
      expect(body.error_code).toBe('web_framework_error');
      expect(body.vm_error_code).toBeNull();
      expect(body.message).toContain(path);
      expect(ledgerHeaders(reply)).toEqual({});
    }
    expect(served(node)).toBe(0);
  });

  const rawReply = (port: number, data: Buffer | string): Promise<RawReply> => rawHttp(`http://127.0.0.1:${port}`, data);

  function expectRawInputError(reply: RawReply, label: string): void {
    expect(reply.status, `${label}: ${reply.status} ${reply.body.toString()}`).toBe(400);
    expect(reply.headers['content-type'], label).toBe('application/json');
    expect(reply.headers['x-cache'], label).toBe('BYPASS');
    expect(
      Object.keys(reply.headers).filter((h) => h.startsWith('x-node-')),
      label,
    ).toEqual([]);
    const body = JSON.parse(reply.body.toString('utf8'));
    expect(Object.keys(body).sort(), label).toEqual(['error_code', 'message', 'vm_error_code']);
    expect(body.error_code, label).toBe('web_framework_error');
    expect(body.vm_error_code, label).toBeNull();
    expect(typeof body.message).toBe('string');
    expect(body.message.length).toBeGreaterThan(0);
  }

  it('a broken request line → 400 JSON error body', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const lines = [
      'GARBAGE\r\n\r\n',
      'POST /v1/view HTTP/1.1 extra\r\nHost: x\r\n\r\n',
      'POST /v1/view HTTP/9\r\nHost: x\r\n\r\n',
      'P@ST /v1/view HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /v1/vi ew HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /v1/view HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n',
    ];
    for (const line of lines) expectRawInputError(await rawReply(port, line), JSON.stringify(line));
    expect(served(node)).toBe(0);
  });

  it('HTTP/1.1 without Host, or an Expect other than 100-continue → 400 JSON error body (never 417)', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const json = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] });
    const post = (version: string, headers: string): string =>
      `POST /v1/view ${version}\r\n${headers}content-type: application/json\r\ncontent-length: ${json.length}\r\nconnection: close\r\n\r\n${json}`;
    const noHost = await rawReply(port, post('HTTP/1.1', ''));
    expectRawInputError(noHost, 'no Host');
    expect(JSON.parse(noHost.body.toString()).message).toContain('Host');
    const expectation = await rawReply(port, post('HTTP/1.1', 'Host: x\r\nexpect: something-else\r\n'));
    expectRawInputError(expectation, 'Expect');
    expect(JSON.parse(expectation.body.toString()).message).toContain('Expect');
    expect(node.counters.byRoute.view).toBe(0);
    // HTTP/1.0 needs no Host.
    const old = await rawReply(port, post('HTTP/1.0', ''));
    expect(old.status).toBe(200);
    expect(old.body.toString()).toBe('["3"]');
    expect(node.counters.byRoute.view).toBe(1);
  });

  it('bad %-encoding in the path → 400 JSON error body', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const body = JSON.stringify({ key: hex(PRESENT) });
    const paths = [`/v1/tables/%zz/raw_item`, `/v1/tables/0x1%/raw_item`, `/v1/tables/%E0%A4%A/raw_item`, `/v1/tables/0x1%C3/raw_item`];
    for (const path of paths) {
      const request = `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\naccept: application/x-bcs\r\n` + `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
      expectRawInputError(await rawReply(port, request), path);
    }
    expect(served(node)).toBe(0);
  });

  it('oversized headers (> 16 KiB) → 400 JSON error body, never 431', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const request = `GET /v1 HTTP/1.1\r\nHost: x\r\nx-filler: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    expectRawInputError(await rawReply(port, request), 'header overflow');
    const many = `POST /v1/view HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 400 }, (_, i) => `x-h${i}: ${'b'.repeat(60)}\r\n`).join('')}\r\n`;
    expectRawInputError(await rawReply(port, many), 'many headers');
    expect(served(node)).toBe(0);
  });

  it('invalid chunked framing → 400 JSON error body, node not called', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const head = 'POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';
    const bodies = ['zz\r\n{}\r\n0\r\n\r\n', '5\r\n{}\r\n0\r\n\r\n', '2\r\n{}XX0\r\n\r\n', '-1\r\n'];
    for (const body of bodies) expectRawInputError(await rawReply(port, head + body), JSON.stringify(body));
    // Both Content-Length and chunked: a request smuggling shape, refused.
    const both = 'POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n';
    expectRawInputError(await rawReply(port, both), 'content-length and chunked');
    expect(node.counters.byRoute.view).toBe(0);
    expect(served(node)).toBe(0);
  });

  it('a well-formed chunked request on a raw socket is served (the node gets Content-Length)', async () => {
    const { node, url } = await setup();
    const port = Number(new URL(url).port);
    const json = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });
    const chunked = `${(10).toString(16)}\r\n${json.slice(0, 10)}\r\n${(json.length - 10).toString(16)}\r\n${json.slice(10)}\r\n0\r\n\r\n`;
    const reply = await rawReply(port, `POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n${chunked}`);
    expect(reply.status).toBe(200);
    expect(reply.body.toString()).toBe('["42"]');
    expect(node.counters.byRoute.view).toBe(1);
    const reached = node.counters.requests.find((r) => r.url === '/v1/view')!;
    expect(reached.headers['content-length']).toBe(String(json.length));
    expect(reached.headers['transfer-encoding']).toBeUndefined();
  });
});
