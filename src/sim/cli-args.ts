// The sim CLI's arguments (node:util parseArgs) → what to start. Kept apart from
// main.ts so it can be tested without starting a process.
import { parseArgs } from 'node:util';
import { SIM_VENDOR_PATTERN } from './ledger-headers.js';
import { parseNodeU64 } from './parse/u64.js';
import { SIM_FAULT_MODES, type SimFaultMode } from './faults.js';
import type { SimOptions, SimWritesOption } from './server.js';

export const USAGE = `usage: sim [options]
  --port N                  listen port (default 8081; 0 = any free port)
  --host H                  listen address (default 127.0.0.1)
  --vendor V                header prefix X-V- and BCS media type (default node)
  --chain-id N              chain id, 0-255 (default 4)
  --versions-per-second R   ledger advance rate, also the pace of its chain clock (default 0: never advances)
  --prune-window N          versions kept: oldest = latest - N (default 1000000)
  --start-version N         latest version at start (default 1000)
  --fault MODE              answer every request with a fault until restarted:
                            ${SIM_FAULT_MODES.join(', ')}
  --writes MODEL            period (default: every value changes every 10 versions; no BCS
                            transaction feed) or sparse (a universe of keys written now and
                            then, listed by the BCS feed GET /v1/transactions)
  --write-rate R            sparse: the share of the universe written per version (default 0.02)
  --hot-share S             sparse: the share of keys that are hot (default 0.05)
  --hot-every N             sparse: a hot key is written about once in N versions (default 8)
  --accounts N              sparse: user accounts in the universe (default 36)
  --objects N               sparse: objects holding a resource group (default 12)
  --tables N                sparse: table handles (default 4)
  --table-keys N            sparse: u64 keys per table (default 32)
  --git-hash H              git_hash in GET /v1 (default simulated)
  --no-gzip                 never gzip answers
  --help                    print this and exit`;

/** What the CLI was asked for: usage, or a node to start (with a fault from the start). */
export type SimCli = { help: true } | { help: false; options: SimOptions; fault?: SimFaultMode };

function u64Option(name: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const value = parseNodeU64(text);
  if (value === null) throw new Error(`--${name} must be a u64: ${text}`);
  return value;
}

function numberOption(name: string, text: string | undefined, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > max) {
    throw new Error(`--${name} must be a number from 0 to ${max}: ${text}`);
  }
  return value;
}

function faultOption(text: string | undefined): SimFaultMode | undefined {
  if (text === undefined) return undefined;
  const mode = SIM_FAULT_MODES.find((known) => known === text);
  if (mode === undefined) throw new Error(`--fault must be one of ${SIM_FAULT_MODES.join(', ')}: ${text}`);
  return mode;
}

function writesOption(values: Record<string, string | boolean | undefined>): SimWritesOption | undefined {
  const model = values.writes as string | undefined;
  const sparse = ['write-rate', 'hot-share', 'hot-every', 'accounts', 'objects', 'tables', 'table-keys'];
  if (model === undefined || model === 'period') {
    const given = sparse.find((name) => values[name] !== undefined);
    if (given !== undefined) throw new Error(`--${given} needs --writes sparse`);
    return model === undefined ? undefined : { model: 'period' };
  }
  if (model !== 'sparse') throw new Error(`--writes must be period or sparse: ${model}`);
  const num = (name: string, max: number): number | undefined =>
    numberOption(name, values[name] as string | undefined, max);
  const whole = (name: string): number | undefined => {
    const value = num(name, 100_000);
    if (value !== undefined && !Number.isInteger(value)) throw new Error(`--${name} must be a whole number: ${value}`);
    return value;
  };
  return {
    model: 'sparse',
    writeRate: num('write-rate', 1),
    hotShare: num('hot-share', 1),
    hotEvery: num('hot-every', 1_000_000),
    accounts: whole('accounts'),
    objects: whole('objects'),
    tables: whole('tables'),
    tableKeys: whole('table-keys'),
  };
}

export function parseSimArgs(argv: string[]): SimCli {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h', default: false },
      port: { type: 'string', default: '8081' },
      host: { type: 'string', default: '127.0.0.1' },
      vendor: { type: 'string', default: 'node' },
      'chain-id': { type: 'string' },
      'versions-per-second': { type: 'string' },
      'prune-window': { type: 'string' },
      'start-version': { type: 'string' },
      fault: { type: 'string' },
      'git-hash': { type: 'string' },
      writes: { type: 'string' },
      'write-rate': { type: 'string' },
      'hot-share': { type: 'string' },
      'hot-every': { type: 'string' },
      accounts: { type: 'string' },
      objects: { type: 'string' },
      tables: { type: 'string' },
      'table-keys': { type: 'string' },
      'no-gzip': { type: 'boolean', default: false },
    },
  });
  if (values.help) return { help: true };
  const port = numberOption('port', values.port, 65535);
  const chainId = numberOption('chain-id', values['chain-id'], 255);
  if (!Number.isInteger(port) || (chainId !== undefined && !Number.isInteger(chainId))) {
    throw new Error('--port and --chain-id must be integers');
  }
  if (!SIM_VENDOR_PATTERN.test(values.vendor))
    throw new Error(`--vendor must match ${SIM_VENDOR_PATTERN}: ${values.vendor}`);
  const options: SimOptions = {
    port,
    host: values.host,
    vendor: values.vendor,
    chainId,
    versionsPerSecond: numberOption('versions-per-second', values['versions-per-second'], 1_000_000),
    pruneWindow: u64Option('prune-window', values['prune-window']),
    startVersion: u64Option('start-version', values['start-version']),
    gitHash: values['git-hash'],
    gzip: !values['no-gzip'],
    writes: writesOption(values),
  };
  const fault = faultOption(values.fault);
  return fault === undefined ? { help: false, options } : { help: false, options, fault };
}
