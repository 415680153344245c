// The error paths of view through the proxy (api.md §3 and §5):
// every one with its exact status and error body, ledger headers only where api.md
// says so, and the sim's counters proving that bad input never reached the node.
// The proxy probes only at start, so it learns of pruning from answers alone.
import { describe, expect, it } from 'vitest';
import { SIM_MODULE_ADDRESS, VM_ABORTED, VM_OUT_OF_GAS } from '../../src/sim/index.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { served, u64le } from '../helpers/cache.js';
import { errorBodyOf, expectInputError, simHeaders } from '../helpers/expect.js';
import { ledgerHeaders, postView, simBehindProxy, viewJson } from '../helpers/proxy.js';

describe('proxy errors: view', () => {
  const addBody = (fn: unknown, typeArgs: unknown = [], args: unknown = ['1', '2']): string =>
    JSON.stringify({ function: fn, type_arguments: typeArgs, arguments: args });

  it('malformed function ids → 400 web_framework_error, node not called', async () => {
    const { node, url } = await simBehindProxy();
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
      expectInputError(await postView(url, addBody(id)), '"function"', `function ${JSON.stringify(id)}`);
    }
    expect(node.counters.byRoute.view).toBe(0);
    expect(served(node)).toBe(0);
  });

  it('missing or mistyped members → 400, node not called', async () => {
    const { node, url } = await simBehindProxy();
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
    for (const [body, part] of cases) expectInputError(await postView(url, body), part, `body ${body}`);
    expect(served(node)).toBe(0);
  });

  it('bad type arguments → 400, node not called', async () => {
    const { node, url } = await simBehindProxy();
    const bad: unknown[] = [
      'u7',
      'vector<u8',
      'vector<>',
      '0x1::string',
      '0x1::string::',
      'U64',
      '',
      5,
      null,
      '0x1::a::B<',
      'u64 u64',
    ];
    for (const t of bad) {
      expectInputError(
        await postView(url, addBody('0x1::sim::type_name', [t], [])),
        'type_arguments[0]',
        `type ${JSON.stringify(t)}`,
      );
    }
    expect(served(node)).toBe(0);
  });

  it("a BCS body that does not decode → 400 invalid_input with the ledger headers, as a node's handler answers it; node not called", async () => {
    const { node, url } = await simBehindProxy();
    const bcs = { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' };
    const good = Buffer.from(
      encodeViewRequest({
        address: SIM_MODULE_ADDRESS,
        module: 'sim',
        function: 'add',
        typeArgs: [],
        args: [u64le(1n), u64le(2n)],
      }),
    );
    const noArgs = Buffer.from(
      encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: 'add', typeArgs: [], args: [] }),
    );
    const bodies: Array<[string, Buffer, string]> = [
      ['empty', Buffer.alloc(0), 'unexpected end of input'],
      ['two bytes', Buffer.from([1, 2]), 'unexpected end of input'],
      ['truncated', good.subarray(0, good.length - 3), 'unexpected end of input'],
      // What the Python SDK's view_bcs can send: an argument count that claims more bytes than follow.
      [
        'argument count beyond the body',
        Buffer.concat([noArgs.subarray(0, -1), Buffer.from([2, 8, 1, 0, 0, 0])]),
        'unexpected end of input',
      ],
      ['trailing byte', Buffer.concat([good, Buffer.from([0])]), 'remaining input'],
      ['json', Buffer.from(addBody('0x1::sim::add')), 'unexpected end of input'],
    ];
    for (const [label, body, reason] of bodies) {
      const reply = await postView(url, body, bcs);
      expect(errorBodyOf(reply, 400, label), label).toEqual({
        message: `Failed to deserialize input into ViewRequest: ${reason}`,
        error_code: 'invalid_input',
        vm_error_code: null,
      });
      expect(ledgerHeaders(reply), label).toEqual(simHeaders(1000n, 0n));
      expect(reply.headers['x-cache'], label).toBe('BYPASS');
    }
    const truncated = good.subarray(0, good.length - 3);
    // The node's version checks come first: 404 beyond its latest, 410 below its history; at a version it has, the 400.
    const future = await postView(url, truncated, bcs, '?ledger_version=2000');
    expect(errorBodyOf(future, 404)).toEqual({
      message: 'Ledger version(2000) not found, latest version is 1000',
      error_code: 'version_not_found',
      vm_error_code: null,
    });
    expect(ledgerHeaders(future)).toEqual(simHeaders(1000n, 0n));
    expect(errorBodyOf(await postView(url, truncated, bcs, '?ledger_version=0990'), 400).error_code).toBe(
      'invalid_input',
    );
    // A ledger_version that is not a u64 is refused before any of it, without ledger headers.
    expectInputError(await postView(url, truncated, bcs, '?ledger_version=x'), 'ledger_version');
    expect(served(node)).toBe(0);

    node.ledger.advance(500);
    node.ledger.pruneTo(1200n);
    // The proxy learns of the prune from an answer, then answers the 410 itself.
    expect((await viewJson(url, '0x1::sim::add', ['1', '2'])).status).toBe(200);
    const pruned = await postView(url, truncated, bcs, '?ledger_version=1100');
    expect(errorBodyOf(pruned, 410)).toEqual({
      message: 'Ledger version(1100) has been pruned',
      error_code: 'version_pruned',
      vm_error_code: null,
    });
    expect(ledgerHeaders(pruned)).toEqual(simHeaders(1500n, 1200n));
    expect(node.counters.byRoute.view).toBe(1);

    // The good one is served.
    const ok = await postView(url, good, bcs);
    expect(ok.status).toBe(200);
    expect(ok.json()).toEqual(['3']);
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('wrong content type → 400, node not called', async () => {
    const { node, url } = await simBehindProxy();
    const body = addBody('0x1::sim::add');
    const types: Array<string | undefined> = [
      undefined,
      'text/plain',
      'application/x-bcs',
      'application/x.aptos.view_function+bcs',
      'application/x-www-form-urlencoded',
    ];
    for (const type of types) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (type !== undefined) headers['content-type'] = type;
      expectInputError(await postView(url, body, headers), 'content type', `content-type ${type ?? '(none)'}`);
    }
    expect(served(node)).toBe(0);
  });

  it('ledger_version that is not a u64 → 400, node not called', async () => {
    const { node, url } = await simBehindProxy();
    for (const v of ['-1', '%2B', '%2B%2B5', '+5', '1.0', 'abc', '18446744073709551616', '']) {
      expectInputError(
        await postView(url, addBody('0x1::sim::add'), undefined, `?ledger_version=${v}`),
        'ledger_version',
        v,
      );
    }
    expect(served(node)).toBe(0);
  });

  it('unknown function or module → 400 invalid_input from the node, with ledger headers', async () => {
    const { node, url } = await simBehindProxy();
    const fn = await viewJson(url, '0x1::sim::nope', []);
    expect(errorBodyOf(fn, 400)).toEqual({
      message: 'Function 0x1::sim::nope not found',
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    expect(ledgerHeaders(fn)).toEqual(simHeaders(1000n, 0n));
    const mod = await viewJson(url, '0x2::nosuch::f', []);
    expect(errorBodyOf(mod, 400)).toEqual({
      message: `Module 0x${'2'.padStart(64, '0')}::nosuch not found`,
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    // A function that is not a view.
    const entry = await viewJson(url, '0x1::sim::poke', []);
    expect(errorBodyOf(entry, 400)).toEqual({
      message: 'Function 0x1::sim::poke is not a view function',
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    // Wrong arity is the node's call.
    const arity = await viewJson(url, '0x1::sim::add', ['1']);
    expect(errorBodyOf(arity, 400)).toEqual({
      message: 'Wrong number of arguments for 0x1::sim::add: expected 2, got 1',
      error_code: 'invalid_input',
      vm_error_code: null,
    });
    expect(node.counters.byRoute.view).toBe(4);
  });

  it('always_abort → 400 invalid_input vm_error_code 4016 (cached when pinned)', async () => {
    const { node, url } = await simBehindProxy();
    const expected = {
      message: 'Move abort in 0x1::sim::always_abort: ABORTED with code 0x1',
      error_code: 'invalid_input',
      vm_error_code: VM_ABORTED,
    };
    const latest = await viewJson(url, '0x1::sim::always_abort', []);
    expect(errorBodyOf(latest, 400)).toEqual(expected);
    expect(latest.headers['x-node-gas-used']).toBeUndefined();
    expect(ledgerHeaders(latest)).toEqual(simHeaders(1000n, 0n));
    const pinned = await viewJson(url, '0x1::sim::always_abort', [], { version: 999 });
    expect(errorBodyOf(pinned, 400)).toEqual(expected);
    expect(pinned.headers['x-cache']).toBe('MISS');
    const hit = await viewJson(url, '0x1::sim::always_abort', [], { version: 999 });
    expect(errorBodyOf(hit, 400)).toEqual(expected);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(ledgerHeaders(hit)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.view).toBe(2);
  });

  it('burn(2000000) → 400 invalid_input vm_error_code 4002, never cached', async () => {
    const { node, url } = await simBehindProxy();
    const expected = {
      message: 'Move abort in 0x1::sim::burn: OUT_OF_GAS',
      error_code: 'invalid_input',
      vm_error_code: VM_OUT_OF_GAS,
    };
    for (let i = 1; i <= 2; i++) {
      const pinned = await viewJson(url, '0x1::sim::burn', ['2000000'], { version: 999 });
      expect(errorBodyOf(pinned, 400)).toEqual(expected);
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
    const { node, url } = await simBehindProxy();
    const future = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 2000 });
    expect(errorBodyOf(future, 404)).toEqual({
      message: 'Ledger version(2000) not found, latest version is 1000',
      error_code: 'version_not_found',
      vm_error_code: null,
    });
    expect(ledgerHeaders(future)).toEqual(simHeaders(1000n, 0n));
    expect(node.counters.byRoute.view).toBe(1);

    node.ledger.advance(500);
    node.ledger.pruneTo(1200n);
    const pruned = await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 1100 });
    expect(errorBodyOf(pruned, 410)).toEqual({
      message: 'Ledger version(1100) has been pruned',
      error_code: 'version_pruned',
      vm_error_code: null,
    });
    expect(ledgerHeaders(pruned)).toEqual(simHeaders(1500n, 1200n));
    expect(node.counters.byRoute.view).toBe(2);
    const again = await viewJson(url, '0x1::sim::balance', ['0x1'], { version: 7 });
    expect(errorBodyOf(again, 410)).toEqual({
      message: 'Ledger version(7) has been pruned',
      error_code: 'version_pruned',
      vm_error_code: null,
    });
    expect(ledgerHeaders(again)).toEqual(simHeaders(1500n, 1200n));
    expect(node.counters.byRoute.view).toBe(2);
  });
});
