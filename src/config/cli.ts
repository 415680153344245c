// Command line: only where the config file is. Everything else is config, so
// there is one place (the file, or env) to look for a setting.

import { parseArgs } from 'node:util';
import { ENV_OVERRIDES } from './env.js';

export interface CliArgs {
  configFile?: string;
  help: boolean;
  version: boolean;
  /** validate the config, print it with secrets redacted, and exit (0, or 2 when invalid) */
  check: boolean;
}

/** The env overrides' names in one column, wide enough for the longest. */
const ENV_NAME_WIDTH = Math.max(...ENV_OVERRIDES.map((o) => o.name.length)) + 2;

export const USAGE = `Usage: ledger-proxy [--config FILE] [--check]

A caching read proxy in front of ledger nodes.

Options:
  -c, --config FILE   YAML config file (without it: built-in defaults, one simulated node)
  --check             validate the config (file and environment), print the effective
                      config with secrets redacted, and exit: 0 valid, 2 invalid
  -v, --version       print the version and exit
  -h, --help          print this help and exit

Environment overrides (applied on top of the file):
${ENV_OVERRIDES.map((o) => `  ${o.name.padEnd(ENV_NAME_WIDTH)}${o.path.join('.')}`).join('\n')}
`;

export class CliError extends Error {
  readonly code = 'ERR_CLI_USAGE';

  constructor(message: string) {
    super(`${message} (see --help)`);
    this.name = 'CliError';
  }
}

/** `argv` without the node binary and script, i.e. process.argv.slice(2). */
export function parseCli(argv: string[]): CliArgs {
  // Non-strict with tokens, so each mistake gets our own message rather than
  // parseArgs' advice about positionals starting with '-'.
  const { tokens } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      check: { type: 'boolean' },
    },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const result: CliArgs = { help: false, version: false, check: false };
  for (const token of tokens) {
    if (token.kind === 'positional') throw new CliError(`unexpected argument '${token.value}'`);
    if (token.kind === 'option-terminator') continue;
    if (token.name === 'help' || token.name === 'version' || token.name === 'check') {
      if (token.value !== undefined) throw new CliError(`${token.rawName} takes no value`);
      result[token.name] = true;
    } else if (token.name === 'config') {
      // `--config --help` would otherwise read a file named "--help".
      if (token.value === undefined || token.value === '' || (!token.inlineValue && token.value.startsWith('-'))) {
        throw new CliError(`${token.rawName} needs a file name`);
      }
      if (result.configFile !== undefined) throw new CliError(`${token.rawName} given more than once`);
      result.configFile = token.value;
    } else {
      throw new CliError(`unknown option '${token.rawName}'`);
    }
  }
  return result;
}
