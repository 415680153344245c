// The error paths of raw_item through the proxy (api.md §3 and §5):
// every one with its exact status and error body, ledger headers only where api.md
// says so, and the sim's counters proving that bad input never reached the node.
// The proxy probes only at start, so it learns of pruning from answers alone.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { simTableItem } from '../../src/sim/index.js';
import { ABSENT, hex, PRESENT, served } from '../helpers/cache.js';
import { errorBodyOf, expectInputError, simHeaders } from '../helpers/expect.js';
import { call, HANDLE, ledgerHeaders, rawItem, type Reply, simBehindProxy, postView } from '../helpers/proxy.js';

const API_DISABLED = {
  message: 'Only BCS is supported as an AcceptType.',
  error_code: 'api_disabled',
  vm_error_code: null,
};

function rawItemBody(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  path = `/v1/tables/${HANDLE}/raw_item`,
): Promise<Reply> {
  return call(url, path, { method: 'POST', headers, body });
}

describe('proxy errors: raw_item', () => {
  it('bad table handles → 400 web_framework_error, no ledger headers, node not called', async () => {
    const { node, url } = await simBehindProxy();
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
    const { node, url } = await simBehindProxy();
    const versions = [
      '-1',
      // A bare '+' is a space in a query string; '%2B' alone, or twice, is no u64.
      '+5',
      '%2B',
      '%2B%2B5',
      '%2B-1',
      '-%2B5',
      '1.0',
      'abc',
      '18446744073709551616',
      `${'0'.repeat(40)}18446744073709551616`,
      '',
      '0x10',
      '1e3',
      '%201',
    ];
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
    // The largest u64 is one (the node has not reached it), however many zeros lead it.
    for (const version of [
      '18446744073709551615',
      `${'0'.repeat(40)}18446744073709551615`,
      '%2B18446744073709551615',
    ]) {
      const max = await rawItem(url, hex(PRESENT), { version });
      expect(errorBodyOf(max, 404, version).error_code, version).toBe('version_not_found');
    }
  });

  it.each([
    ['leading zeros of any length', `${'0'.repeat(70)}990`],
    ["a leading '+' (sent as %2B)", '%2B990'],
    ["a leading '+' and zeros", `%2B${'0'.repeat(30)}990`],
  ])('%s: the same version, as a node reads it: one node call, one entry', async (_, spelling) => {
    const { node, url } = await simBehindProxy();
    const first = await rawItem(url, hex(PRESENT), { version: spelling });
    expect([first.status, first.headers['x-cache']]).toEqual([200, 'MISS']);
    expect(first.body).toEqual(simTableItem(HANDLE, PRESENT, 990n));
    // The node is asked for the number, not the spelling.
    expect(node.counters.requests.filter((r) => r.url.includes('/raw_item')).map((r) => r.url)).toEqual([
      `/v1/tables/${HANDLE}/raw_item?ledger_version=990`,
    ]);
    for (const again of [990, '0990', '%2B990']) {
      const reply = await rawItem(url, hex(PRESENT), { version: again });
      expect([reply.status, reply.headers['x-cache']], String(again)).toEqual([200, 'HIT']);
    }
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('wrong or missing content type → 400 naming the content type, node not called', async () => {
    const { node, url } = await simBehindProxy();
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
    const withCharset = await rawItemBody(url, body, {
      'content-type': 'application/json; charset=utf-8',
      accept: 'application/x-bcs',
    });
    expect(withCharset.status).toBe(200);
    expect(withCharset.body).toEqual(simTableItem(HANDLE, PRESENT, 1000n));
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('malformed JSON, missing key, bad hex → 400 web_framework_error, node not called', async () => {
    const { node, url } = await simBehindProxy();
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
    expectInputError(
      await rawItemBody(url, '{}', { 'content-type': 'application/json', accept: 'application/json' }),
      'missing string member "key"',
      'json accept',
    );
    expect(served(node)).toBe(0);
  });

  it('a JSON body that is not valid UTF-8, or starts with a BOM → 400, node not called (nodes refuse them)', async () => {
    const { node, url } = await simBehindProxy();
    const headers = { 'content-type': 'application/json', accept: 'application/x-bcs' };
    const valid = JSON.stringify({ key: hex(PRESENT), note: '\ufffd' });
    // Served and cached when valid...
    const ok = await rawItemBody(url, valid, headers, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`);
    expect(ok.status).toBe(200);
    expect(node.counters.byRoute.raw_item).toBe(1);
    // ...but the same bytes with a raw 0xff where U+FFFD was are no request a node takes.
    const invalid = Buffer.concat([
      Buffer.from(`{"key":"${hex(PRESENT)}","note":"`),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    const bad = await rawItemBody(url, invalid, headers, `/v1/tables/${HANDLE}/raw_item?ledger_version=990`);
    expectInputError(bad, 'not valid UTF-8');
    const badLatest = await rawItemBody(url, invalid, headers);
    expectInputError(badLatest, 'not valid UTF-8');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid)]);
    expectInputError(await rawItemBody(url, bom, headers), 'malformed JSON', 'BOM');
    const viewBody = Buffer.concat([
      Buffer.from('{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"],"x":"'),
      Buffer.from([0xc3]),
      Buffer.from('"}'),
    ]);
    expectInputError(await postView(url, viewBody), 'not valid UTF-8', 'view');
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(node.counters.byRoute.view).toBe(0);
  });

  it('a body over server.bodyLimitBytes → 400 (never 413), node not called', async () => {
    const { node, url } = await simBehindProxy({ server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 1024 } });
    const big = JSON.stringify({ key: '0x' + 'ab'.repeat(1000) });
    expect(big.length).toBeGreaterThan(1024);
    const reply = await rawItemBody(url, big, { 'content-type': 'application/json', accept: 'application/x-bcs' });
    expectInputError(reply, 'larger than the limit of 1024 bytes');
    // Also without a content type, and on view.
    expectInputError(
      await rawItemBody(url, big, { accept: 'application/x-bcs' }),
      /larger than the limit of 1024 bytes|content type/,
      'no content type',
    );
    expectInputError(await postView(url, Buffer.alloc(2048, 0x20)), 'larger than the limit of 1024 bytes', 'view');
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
    const { node, url } = await simBehindProxy();
    const body = JSON.stringify({ key: hex(PRESENT) });
    const accepts: Array<string | undefined> = [
      'application/json',
      undefined,
      '*/*',
      'text/html',
      'application/*',
      'application/json, application/x-bcs',
      'application/json;q=0.1, application/x-bcs',
    ];
    for (const accept of accepts) {
      // A version with a long run of leading zeros is a version: the Accept rule answers, as on a node.
      for (const version of ['', '?ledger_version=1000', `?ledger_version=${'0'.repeat(70)}1`]) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (accept !== undefined) headers.accept = accept;
        const reply = await rawItemBody(url, body, headers, `/v1/tables/${HANDLE}/raw_item${version}`);
        const label = `accept ${accept ?? '(none)'} ${version}`;
        expect(errorBodyOf(reply, 403, label), label).toEqual(API_DISABLED);
        expect(ledgerHeaders(reply), label).toEqual({});
      }
    }
    expect(served(node)).toBe(0);
    // The first of the two that appears wins, parameters (weights too) ignored (api.md §3).
    for (const accept of [
      'text/plain, application/x-bcs;q=0.5, application/json',
      'application/x-bcs;q=0.1, application/json',
      'application/x-bcs; charset=utf-8',
    ]) {
      expect((await rawItem(url, hex(PRESENT), { accept })).status, accept).toBe(200);
    }
    // Each a latest read: each asks the node.
    expect(node.counters.byRoute.raw_item).toBe(3);
  });

  it('N > latest → 404 version_not_found from the node, with ledger headers, not cached', async () => {
    const { node, url } = await simBehindProxy();
    const reply = await rawItem(url, hex(PRESENT), { version: 1005 });
    expect(errorBodyOf(reply, 404)).toEqual({
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
    const { node, url } = await simBehindProxy();
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
    expect(errorBodyOf(first, 410)).toEqual(pruned410);
    expect(ledgerHeaders(first)).toEqual(simHeaders(1110n, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(2);

    // Now it knows: 410 from the proxy, the node not called, cached or not.
    const again = await rawItem(url, hex(PRESENT), { version: 1000 });
    expect(errorBodyOf(again, 410)).toEqual(pruned410);
    expect(ledgerHeaders(again)).toEqual(simHeaders(1110n, 1050n));
    const other = await rawItem(url, hex(ABSENT), { version: 1049, handle: '0x' + 'AB'.repeat(32) });
    expect(errorBodyOf(other, 410)).toEqual({ ...pruned410, message: 'Ledger version(1049) has been pruned' });
    const cached = await rawItem(url, hex(PRESENT), { version: 1040 });
    expect(errorBodyOf(cached, 410)).toEqual({ ...pruned410, message: 'Ledger version(1040) has been pruned' });
    expect(ledgerHeaders(cached)).toEqual(simHeaders(1110n, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(2);

    // The oldest version itself is still served.
    const oldest = await rawItem(url, hex(PRESENT), { version: 1050 });
    expect(oldest.status).toBe(200);
    expect(oldest.body).toEqual(simTableItem(HANDLE, PRESENT, 1050n));
    expect(node.counters.byRoute.raw_item).toBe(3);
  });

  it('absent item → 404 table_item_not_found with ledger headers (deterministic, so cached when pinned)', async () => {
    const { node, url } = await simBehindProxy();
    const expected = {
      message: `Table Item not found by Table handle(${HANDLE}), Table key(${hex(ABSENT)}) and Ledger version(1000)`,
      error_code: 'table_item_not_found',
      vm_error_code: null,
    };
    const latest = await rawItem(url, hex(ABSENT));
    expect(errorBodyOf(latest, 404)).toEqual(expected);
    expect(ledgerHeaders(latest)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.raw_item).toBe(1);

    const pinned = await rawItem(url, hex(ABSENT), { version: 990 });
    expect(errorBodyOf(pinned, 404)).toEqual({ ...expected, message: expected.message.replace('(1000)', '(990)') });
    expect(ledgerHeaders(pinned)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.raw_item).toBe(2);
    const hit = await rawItem(url, hex(ABSENT), { version: 990 });
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.body).toEqual(pinned.body);
    expect(node.counters.byRoute.raw_item).toBe(2);
  });
});
