// Starts real things on port 0 for integration tests: simulated nodes and a proxy
// built with buildApp, and registers their cleanup where they are created.
import pino from 'pino';
import { request } from 'undici';
import { afterEach } from 'vitest';
import { buildApp, type App, type AppDeps } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { startSim, type SimNode, type SimOptions, type SimSparseOptions } from '../../src/sim/index.js';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

export async function sim(options: SimOptions = {}): Promise<SimNode> {
  const node = await startSim({ gzip: true, ...options });
  cleanups.push(() => node.close());
  return node;
}

/** A sim in the sparse write model (a universe of keys written now and then, and its BCS feed). */
export function sparseSim(sparse: SimSparseOptions = {}, options: Omit<SimOptions, 'writes'> = {}): Promise<SimNode> {
  return sim({ ...options, writes: { model: 'sparse', ...sparse } });
}

export interface ProxyHandle {
  app: App;
  url: string;
}

/** A proxy on 127.0.0.1:0 in front of `upstreams`, with `overrides` merged into the config; `deps.env` holds the keys given by env. */
export type UpstreamSpec =
  | SimNode
  | {
      url: string;
      name?: string;
      role?: string;
      weight?: number;
      maxInFlight?: number;
      maxRps?: number;
      headers?: Record<string, string>;
    };

export async function proxy(
  upstreams: UpstreamSpec[],
  overrides: Record<string, unknown> = {},
  deps: AppDeps = {},
): Promise<ProxyHandle> {
  const config = parseConfig(
    {
      server: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      upstreams: upstreams.map((u, i) => {
        if ('counters' in u) return { url: u.url, name: `node${i}` };
        // `name: undefined` given explicitly: the config's own default name (its position, node1, …).
        if ('name' in u && u.name === undefined) return { ...u, name: undefined };
        return { ...u, name: u.name ?? `node${i}` };
      }),
      log: { level: 'silent' },
      ...overrides,
    },
    // Keys given by env are read from the test's own env, never the process's.
    deps.env ?? {},
  );
  const app = await buildApp(config, {
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    env: {},
    ...deps,
  });
  cleanups.push(() => app.close());
  const url = await app.listen();
  return { app, url };
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json(): any;
}

export async function call(
  base: string,
  path: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  const res = await request(base + path, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers: init.headers,
    body: init.body,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers, body, json: () => JSON.parse(body.toString('utf8')) };
}

/**
 * Routing under which the proxy probes its nodes at start and then not for ten
 * minutes: no probe lands in the middle of a test, so a node's counters count the
 * test's own requests.
 */
export const QUIET_ROUTING = { probeIntervalMs: 600_000 };
/** Config overrides with QUIET_ROUTING. */
export const QUIET = { routing: QUIET_ROUTING };

/** A sim, and a QUIET proxy in front of it with `overrides` merged into the config. */
export async function simBehindProxy(
  overrides: Record<string, unknown> = {},
): Promise<{ node: SimNode; app: App; url: string }> {
  const node = await sim();
  const { app, url } = await proxy([node], { ...QUIET, ...overrides });
  return { node, app, url };
}

export const HANDLE = '0x' + 'ab'.repeat(32);

export function rawItem(
  base: string,
  key: string,
  opts: { version?: bigint | number | string; handle?: string; accept?: string } = {},
): Promise<Reply> {
  const q = opts.version !== undefined ? `?ledger_version=${opts.version}` : '';
  return call(base, `/v1/tables/${opts.handle ?? HANDLE}/raw_item${q}`, {
    headers: { 'content-type': 'application/json', accept: opts.accept ?? 'application/x-bcs' },
    body: JSON.stringify({ key }),
  });
}

export function viewJson(
  base: string,
  fn: string,
  args: unknown[],
  opts: { version?: bigint | number; typeArgs?: string[]; accept?: string } = {},
): Promise<Reply> {
  const q = opts.version !== undefined ? `?ledger_version=${opts.version}` : '';
  return call(base, `/v1/view${q}`, {
    headers: { 'content-type': 'application/json', accept: opts.accept ?? 'application/json' },
    body: JSON.stringify({ function: fn, type_arguments: opts.typeArgs ?? [], arguments: args }),
  });
}

/** The ledger version a reply's headers say. */
export const versionOf = (reply: Reply): bigint => BigInt(reply.headers['x-node-ledger-version']);

/** POST /v1/view with `body` as it is (bytes or text), for input viewJson would not write. */
export function postView(
  base: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  query = '',
): Promise<Reply> {
  return call(base, `/v1/view${query}`, { method: 'POST', headers, body });
}

/** The seven ledger headers of a reply under a prefix, lower-case names. */
export function ledgerHeaders(reply: Reply, prefix = 'x-node-'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [
    'chain-id',
    'ledger-version',
    'ledger-oldest-version',
    'ledger-timestampusec',
    'epoch',
    'block-height',
    'oldest-block-height',
  ]) {
    if (reply.headers[prefix + name] !== undefined) out[prefix + name] = reply.headers[prefix + name];
  }
  return out;
}

// freePort lives in free-port.ts; re-exported for the suites that import it with the proxy.
export { freePort } from './free-port.js';

/** A logger whose lines (parsed) are kept, for tests that assert on the log. */
export function capturedLog(level: 'info' | 'debug' = 'info'): {
  logger: pino.Logger;
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}
