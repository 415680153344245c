// The sim CLI's arguments (node:util parseArgs) → SimOptions. Kept apart from
// main.ts so it can be tested without starting a process.
import { parseArgs } from 'node:util';
import { parseU64 } from '../wire/u64.js';
import { VENDOR_PATTERN } from '../wire/vendor.js';
import type { SimOptions } from './server.js';

export const USAGE =
  'usage: sim [--port 8081] [--host 127.0.0.1] [--vendor node] [--chain-id 4] [--versions-per-second 2] ' +
  '[--prune-window N] [--start-version N] [--git-hash H] [--no-gzip]';

function u64Option(name: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const value = parseU64(text);
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

export function parseSimArgs(argv: string[]): SimOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string', default: '8081' },
      host: { type: 'string', default: '127.0.0.1' },
      vendor: { type: 'string', default: 'node' },
      'chain-id': { type: 'string' },
      'versions-per-second': { type: 'string' },
      'prune-window': { type: 'string' },
      'start-version': { type: 'string' },
      'git-hash': { type: 'string' },
      'no-gzip': { type: 'boolean', default: false },
    },
  });
  const port = numberOption('port', values.port, 65535);
  const chainId = numberOption('chain-id', values['chain-id'], 255);
  if (!Number.isInteger(port) || (chainId !== undefined && !Number.isInteger(chainId))) {
    throw new Error('--port and --chain-id must be integers');
  }
  if (!VENDOR_PATTERN.test(values.vendor)) throw new Error(`--vendor must match ${VENDOR_PATTERN}: ${values.vendor}`);
  return {
    port,
    host: values.host,
    vendor: values.vendor,
    chainId,
    versionsPerSecond: numberOption('versions-per-second', values['versions-per-second'], 1_000_000),
    pruneWindow: u64Option('prune-window', values['prune-window']),
    startVersion: u64Option('start-version', values['start-version']),
    gitHash: values['git-hash'],
    gzip: !values['no-gzip'],
  };
}
