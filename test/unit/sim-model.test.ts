// The sim's deterministic model, without HTTP: table items, view semantics and
// their encodings, the module ABI, fault bookkeeping and the CLI arguments.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SimError } from '../../src/sim/node-error.js';
import { parseTypeTag, type TypeTag } from '../../src/wire/move-type.js';
import {
  encodeBcsValues,
  encodeJsonValues,
  findSimView,
  runSimView,
  simBalance,
  simModuleJson,
  simTableItem,
  SIM_VIEW_GAS,
} from '../../src/sim/index.js';
import { SIM_FAULT_MODES, SimFaultInjector } from '../../src/sim/faults.js';
import { SimRequestCounters } from '../../src/sim/counters.js';
import { parseSimArgs } from '../../src/sim/cli-args.js';
import { decodeBcsArg, decodeJsonArg } from '../../src/sim/state/view-codec.js';
import { u64le } from '../helpers/bytes.js';
import { thrownBy } from '../helpers/expect.js';

const HANDLE = '0x' + 'ab'.repeat(32);
const sha = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();
const thrown = (run: () => unknown): SimError => thrownBy(SimError, run);

describe('simTableItem', () => {
  const handleBytes = Buffer.from(HANDLE.slice(2), 'hex');
  const keys = Array.from({ length: 64 }, (_, i) => Buffer.from([i]));

  it('has an item iff sha256(handle ‖ key)[0] % 4 !== 0, valued by sha256(handle ‖ key ‖ u64le(N / 10))[0..8]', () => {
    let present = 0;
    for (const key of keys) {
      const expected = sha(handleBytes, key)[0] % 4 === 0 ? null : sha(handleBytes, key, u64le(123n)).subarray(0, 8);
      expect(simTableItem(HANDLE, key, 1234n)).toEqual(expected);
      if (expected !== null) present++;
    }
    expect(present).toBeGreaterThan(0);
    expect(present).toBeLessThan(keys.length);
  });

  it('keeps a value for 10 versions and changes it at the next period', () => {
    const key = keys.find((k) => simTableItem(HANDLE, k, 0n) !== null)!;
    expect(simTableItem(HANDLE, key, 1230n)).toEqual(simTableItem(HANDLE, key, 1239n));
    expect(simTableItem(HANDLE, key, 1240n)).not.toEqual(simTableItem(HANDLE, key, 1239n));
  });
});

describe('0x1::sim view functions', () => {
  const sim = '0x' + '1'.padStart(64, '0');
  const owner = '0x' + '42'.repeat(32);
  const t = (text: string): TypeTag => parseTypeTag(text)!;

  it('balance changes every 10 versions and stays below 10^12', () => {
    const fn = findSimView(sim, 'sim', 'balance');
    const at = (v: bigint): bigint => runSimView(fn, [], [owner], v)[0].value as bigint;
    expect(at(1000n)).toBe(simBalance(owner, 1000n));
    expect(at(1009n)).toBe(at(1000n));
    expect(at(1010n)).not.toBe(at(1000n));
    expect(at(1000n)).toBeLessThan(1_000_000_000_000n);
  });

  it('add, pair and type_name compute their documented values', () => {
    expect(runSimView(findSimView(sim, 'sim', 'add'), [], [18446744073709551615n, 1n], 0n)).toEqual([
      { type: 'u128', value: 18446744073709551616n },
    ]);
    expect(runSimView(findSimView(sim, 'sim', 'pair'), [], [7n], 0n)).toEqual([
      { type: 'u64', value: 3n },
      { type: 'bool', value: false },
    ]);
    expect(runSimView(findSimView(sim, 'sim', 'type_name'), [t('vector<0x1::aptos_coin::AptosCoin>')], [], 0n)).toEqual(
      [{ type: '0x1::string::String', value: `vector<${sim}::aptos_coin::AptosCoin>` }],
    );
  });

  it('aborts with 4016, runs out of gas above 1_000_000 with 4002', () => {
    const abort = thrown(() => runSimView(findSimView(sim, 'sim', 'always_abort'), [], [], 0n));
    expect([abort.status, abort.code, abort.vmErrorCode]).toEqual([400, 'invalid_input', 4016]);
    const burn = findSimView(sim, 'sim', 'burn');
    expect(runSimView(burn, [], [1_000_000n], 0n)).toEqual([{ type: 'u64', value: 1_000_000n }]);
    const oog = thrown(() => runSimView(burn, [], [1_000_001n], 0n));
    expect([oog.status, oog.code, oog.vmErrorCode]).toEqual([400, 'invalid_input', 4002]);
  });

  it('refuses unknown modules and functions, non-views and wrong arity with invalid_input and no vm code', () => {
    for (const run of [
      () => findSimView('0x' + '2'.padStart(64, '0'), 'sim', 'add'),
      () => findSimView(sim, 'other', 'add'),
      () => findSimView(sim, 'sim', 'missing'),
      () => findSimView(sim, 'sim', 'Add'),
      () => findSimView(sim, 'sim', 'poke'),
      () => runSimView(findSimView(sim, 'sim', 'add'), [], [1n], 0n),
      () => runSimView(findSimView(sim, 'sim', 'type_name'), [], [], 0n),
      () => runSimView(findSimView(sim, 'sim', 'add'), [t('u8')], [1n, 2n], 0n),
    ]) {
      const err = thrown(run);
      expect([err.status, err.code, err.vmErrorCode]).toEqual([400, 'invalid_input', null]);
    }
  });

  it('reports a constant gas per view function', () => {
    expect(SIM_VIEW_GAS).toEqual({ balance: 7n, add: 3n, pair: 4n, type_name: 5n, always_abort: 2n, burn: 11n });
  });
});

describe('view codec', () => {
  it('decodes JSON arguments: address text, u64 as string or safe integer', () => {
    expect(decodeJsonArg('address', '0x1', 0)).toBe('0x' + '1'.padStart(64, '0'));
    expect(decodeJsonArg('u64', '18446744073709551615', 0)).toBe(18446744073709551615n);
    expect(decodeJsonArg('u64', 42, 0)).toBe(42n);
    for (const [type, value] of [
      ['u64', '-1'],
      ['u64', 1.5],
      ['u64', 2 ** 60],
      ['u64', true],
      ['address', 'zz'],
      ['address', 1],
    ] as const) {
      expect(thrown(() => decodeJsonArg(type, value, 0)).code).toBe('invalid_input');
    }
  });

  it('decodes BCS arguments of exactly the right size', () => {
    expect(decodeBcsArg('u64', u64le(9n), 0)).toBe(9n);
    expect(decodeBcsArg('address', Buffer.alloc(32, 0xab), 0)).toBe(HANDLE);
    expect(thrown(() => decodeBcsArg('u64', Buffer.alloc(4), 0)).code).toBe('invalid_input');
    expect(thrown(() => decodeBcsArg('address', Buffer.alloc(31), 0)).code).toBe('invalid_input');
  });

  it('encodes answers as a JSON array or uleb128(count) ‖ each value in BCS', () => {
    const values = [
      { type: 'u64', value: 5n },
      { type: 'u128', value: 2n ** 64n },
      { type: 'bool', value: true },
      { type: '0x1::string::String', value: 'ab' },
    ] as const;
    expect(encodeJsonValues([...values]).toString()).toBe('["5","18446744073709551616",true,"ab"]');
    expect(encodeBcsValues([...values]).toString('hex')).toBe(
      '04' + '0500000000000000' + '0000000000000000' + '0100000000000000' + '01' + '026162',
    );
  });
});

describe('module ABI', () => {
  it('lists every function the way the Aptos SDK reads it', () => {
    const json = simModuleJson() as {
      bytecode: string;
      abi: { address: string; exposed_functions: Array<Record<string, unknown>> };
    };
    expect(json.bytecode).toMatch(/^0xa11ceb0b[0-9a-f]+$/);
    expect(json.abi.address).toBe('0x1');
    expect(json.abi.exposed_functions.find((f) => f.name === 'type_name')).toEqual({
      name: 'type_name',
      visibility: 'public',
      is_entry: false,
      is_view: true,
      generic_type_params: [{ constraints: [] }],
      params: [],
      return: ['0x1::string::String'],
    });
    expect(json.abi.exposed_functions.find((f) => f.name === 'pair')?.return).toEqual(['u64', 'bool']);
  });
});

describe('SimFaultInjector', () => {
  it('faults only matching routes and only the next count requests', () => {
    const faults = new SimFaultInjector();
    faults.set({ mode: 'status500', routes: ['view'], count: 2 });
    expect(faults.take('raw_item')).toBeNull();
    expect(faults.take('view')?.mode).toBe('status500');
    expect(faults.take('view')?.mode).toBe('status500');
    expect(faults.take('view')).toBeNull();
  });

  it('keeps faulting until clear() without a count', () => {
    const faults = new SimFaultInjector();
    faults.set({ mode: 'reset' });
    expect(faults.take('other')?.mode).toBe('reset');
    expect(faults.take('ledger_info')?.mode).toBe('reset');
    faults.clear();
    expect(faults.take('other')).toBeNull();
    expect(() => faults.set({ mode: 'reset', count: 0 })).toThrow(RangeError);
  });
});

describe('sim CLI arguments', () => {
  it('parses every option', () => {
    expect(
      parseSimArgs([
        '--port',
        '9000',
        '--host',
        '0.0.0.0',
        '--vendor',
        'aptos',
        '--chain-id',
        '2',
        '--versions-per-second',
        '2.5',
        '--prune-window',
        '100',
        '--start-version',
        '7',
        '--no-gzip',
      ]),
    ).toEqual({
      help: false,
      options: {
        port: 9000,
        host: '0.0.0.0',
        vendor: 'aptos',
        chainId: 2,
        versionsPerSecond: 2.5,
        pruneWindow: 100n,
        startVersion: 7n,
        gitHash: undefined,
        gzip: false,
      },
    });
    expect(parseSimArgs([])).toMatchObject({
      help: false,
      options: { port: 8081, host: '127.0.0.1', vendor: 'node', gzip: true },
    });
    expect(parseSimArgs([])).not.toHaveProperty('fault');
  });

  it('takes --fault with every mode the sim has, and --help before anything else', () => {
    for (const mode of SIM_FAULT_MODES)
      expect(parseSimArgs(['--fault', mode])).toMatchObject({ help: false, fault: mode });
    expect(parseSimArgs(['--help'])).toEqual({ help: true });
    expect(parseSimArgs(['-h', '--port', '1'])).toEqual({ help: true });
  });

  it('refuses bad values and unknown options', () => {
    for (const argv of [
      ['--vendor', 'Bad-Vendor'],
      ['--port', 'x'],
      ['--port', '1.5'],
      ['--chain-id', '300'],
      ['--prune-window', '-1'],
      ['--bogus'],
      ['--fault', 'explode'],
      ['--fault'],
    ]) {
      expect(() => parseSimArgs(argv)).toThrow();
    }
  });
});

describe('SimRequestCounters', () => {
  it('keeps only the last 1000 requests but counts them all', () => {
    const counters = new SimRequestCounters();
    for (let i = 0; i < 1005; i++)
      counters.record('view', { method: 'POST', url: `/v1/view?i=${i}`, headers: {}, body: Buffer.alloc(0) });
    expect(counters.total).toBe(1005);
    expect(counters.byRoute.view).toBe(1005);
    expect(counters.requests).toHaveLength(1000);
    expect(counters.requests[0].url).toBe('/v1/view?i=5');
  });
});
