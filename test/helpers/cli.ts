// The real CLI (src/main.ts built once per run by test/global-setup.ts into a temp
// dir under the repo; never dist/), started on a config file of the test's.
// Call useCliBuild() at the top of a file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { freePort } from './free-port.js';
import { until } from './until.js';

const ROOT = resolve(import.meta.dirname, '../..');
let build: string | undefined;
let configs: string | undefined;
const children: ChildProcess[] = [];

export interface Cli {
  child: ChildProcess;
  url: string;
  port: number;
  configFile: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Uses the CLI built once for the run (test/global-setup.ts), kills what is left after each test, removes the config files after all. */
export function useCliBuild(): void {
  beforeAll(() => {
    build = inject('cliBuild');
    configs = mkdtempSync(join(tmpdir(), 'ledger-proxy-cli-'));
  });

  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      }
    }
  });

  afterAll(() => {
    if (configs) rmSync(configs, { recursive: true, force: true });
  });
}

/** A file in the config temp dir (written with `text`). */
export function configFile(name: string, text: string): string {
  const file = join(configs!, name);
  writeFileSync(file, text);
  return file;
}

type Sections = Record<string, unknown>;

/**
 * A config file's text: the public listener on 127.0.0.1:port, `node` the one
 * upstream (named sim), no admin listener, log level info; a section of `more`
 * adds to that section's keys (server, admin, log) or is added whole.
 */
export function cliConfig(port: number, node: { url: string }, more: Record<string, Sections> = {}): string {
  const config: Record<string, unknown> = {
    server: { host: '127.0.0.1', port, ...more.server },
    admin: { port: 0, ...more.admin },
    upstreams: [{ url: node.url, name: 'sim' }],
    log: { level: 'info', ...more.log },
  };
  for (const [section, keys] of Object.entries(more)) if (!(section in config)) config[section] = keys;
  return stringify(config);
}

/** Runs the CLI to its end with `args` (--check, --version...), with only `env`'s LEDGER_PROXY_* variables. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEDGER_PROXY_')));
  const child = spawn(process.execPath, [join(build!, 'main.js'), ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

/**
 * Starts the CLI on `file` (which must set server.port = `port`); resolves once it answers GET /v1.
 * `nodeArgs` go to node before the script (`--import` of a module the test plants).
 */
export async function startCli(file: string, port: number, nodeArgs: string[] = []): Promise<Cli> {
  // No LEDGER_PROXY_* from the environment may override the file.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEDGER_PROXY_')));
  const child = spawn(process.execPath, [...nodeArgs, join(build!, 'main.js'), '--config', file], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const answers = async (): Promise<boolean> => {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode} at start:\n${out}`);
    try {
      const res = await request(`${url}/v1`, { reset: true });
      await res.body.arrayBuffer();
      return res.statusCode === 200;
    } catch {
      return false; // not listening yet
    }
  };
  await until(answers, 15_000, () => `the proxy to answer GET /v1:\n${out}`);
  return { child, url, port, configFile: file, output: () => out, exited };
}

/** Starts the CLI on a free port with a config file for `node` (cliConfig with `more`); resolves once it answers GET /v1. */
export async function startCliFor(
  node: { url: string },
  more: Record<string, Sections> = {},
  nodeArgs: string[] = [],
): Promise<Cli> {
  const port = await freePort();
  return startCli(configFile(`config-${port}.yaml`, cliConfig(port, node, more)), port, nodeArgs);
}

/** The JSON lines of a CLI's output, parsed (pretty or other lines left out). */
export function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
