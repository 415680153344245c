// The README's commands do what it says, run as written (only the ports moved to
// free ones and dist/ to the test build, so nothing here meets a proxy someone
// runs on 8080): the Redis quickstart (a Redis of its own, a clear failure on a
// port already taken, a stop command that stops only it), `npm run sim` (its ledger advances),
// the node-failure walkthrough (its answers, and nothing left running after it),
// the cache purge examples, and the Aptos SDK snippet against the simulated node.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { connectionRefused } from '../helpers/probe.js';
import { freePort } from '../helpers/free-port.js';
import { proxy } from '../helpers/proxy.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { until, within } from '../helpers/until.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The first ```lang block after `marker` in the README. */
function block(marker: string, lang: string): string {
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README has no "${marker}"`);
  const open = README.indexOf(`\`\`\`${lang}\n`, at);
  const close = README.indexOf('\n```', open + 4);
  return README.slice(open + lang.length + 4, close + 1);
}

/** Shell text with the README's ports and paths moved: `ports` maps a README port to a free one. */
function relocate(text: string, ports: Record<number, number>): string {
  let out = text.replaceAll('dist/', `${inject('cliBuild')}/`).replace(/^npm run build\n/m, '');
  for (const [from, to] of Object.entries(ports)) out = out.replaceAll(String(from), String(to));
  return out;
}

interface Shell {
  done: Promise<number | null>;
  output(): string;
  pgid: number;
}

const groups: number[] = [];
afterEach(() => {
  // Whatever a command left running (the bug these tests look for) ends with the test.
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
});

/**
 * The README's Redis quickstart block and its stop command, with the Redis port
 * the README names moved to `port` (its pidfile's name with it), `npm start`
 * run as the test build on config/default.yaml with the built-in node moved off
 * 8081; `cleanup` removes what it wrote.
 */
async function redisQuickstart(port: number): Promise<{ script: string; stop: string; cleanup(): void }> {
  const marker = 'With Redis as the shared second tier';
  const text = block(marker, 'sh').trim();
  const named = Number(/--port (\d+)/.exec(text)?.[1]);
  const prose = README.slice(README.indexOf(marker), README.indexOf('```sh', README.indexOf(marker)));
  const stop = /`(kill "\$\(cat redis-\d+\.pid\)")`/.exec(prose)?.[1];
  if (!named || stop === undefined)
    throw new Error(`the quickstart names no Redis port or no stop command by pidfile:\n${prose}${text}`);
  const dir = join(ROOT, '.test-build', `readme-redis-${process.pid}-${port}`);
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'default.yaml');
  writeFileSync(
    config,
    readFileSync(join(ROOT, 'config/default.yaml'), 'utf8').replace(
      /^ {2}port: 8081\b/m,
      `  port: ${await freePort()}`,
    ),
  );
  const script = relocate(text, { [named]: port }).replace(
    'npm start',
    `node ${inject('cliBuild')}/main.js --config ${config}`,
  );
  const cleanup = (): void => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(ROOT, `redis-${port}.pid`), { force: true });
  };
  return { script, stop: relocate(stop, { [named]: port }), cleanup };
}

/** Runs `script` with bash in its own process group, from the repository root, with `env` added. */
function bash(script: string, env: Record<string, string>): Shell {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEDGER_PROXY_')));
  const child = spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: { ...base, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  groups.push(child.pid!);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { done: new Promise((r) => child.once('exit', (code) => r(code))), output: () => out, pgid: child.pid! };
}

describe('README', () => {
  it('the node-failure walkthrough answers as its comments say, and leaves nothing running', async () => {
    const [proxyPort, simPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    const script = relocate(block('### Version checks and a node failure', 'sh'), {
      8080: proxyPort,
      8081: simPort,
      9090: adminPort,
    });
    // config/default.yaml's listeners, moved like the URLs of the script.
    const shell = bash(script, { LEDGER_PROXY_PORT: String(proxyPort), LEDGER_PROXY_ADMIN_PORT: String(adminPort) });
    await within(shell.done, 30_000, () => `the walkthrough to end:\n${shell.output()}`);
    const statuses = shell.output().match(/^\d{3}$/gm);
    expect(statuses, shell.output()).toEqual(['404', '410', '200', '503', '503', '200']);
    expect(await connectionRefused(proxyPort), 'the proxy stopped').toBe(true);
    expect(await connectionRefused(simPort), 'the simulated node stopped').toBe(true);
  });

  it('`npm run sim` runs a node whose ledger advances', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const command = pkg.scripts.sim.split('&&').at(-1)!.trim();
    expect(command).toMatch(/^node dist\/sim\/main\.js/);
    const simPort = await freePort();
    const shell = bash(`exec ${relocate(command, {})} --port ${simPort}`, {});
    const url = `http://127.0.0.1:${simPort}/v1`;
    const version = async (): Promise<bigint | undefined> => {
      try {
        const res = await request(url);
        return BigInt(((await res.body.json()) as { ledger_version: string }).ledger_version);
      } catch {
        return undefined;
      }
    };
    await until(
      async () => (await version()) !== undefined,
      10_000,
      () => `the sim answering:\n${shell.output()}`,
    );
    const first = (await version())!;
    await until(async () => ((await version()) ?? 0n) > first, 3000, 'the ledger advancing');
  });

  it('the Redis quickstart starts a Redis of its own and the proxy on it; its stop command stops that Redis', async () => {
    const [redisPort, proxyPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    // Read before anything starts: a README without the block starts nothing.
    const { script, stop, cleanup } = await redisQuickstart(redisPort);
    const redis = new Redis(redisPort, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    const shell = bash(script, { LEDGER_PROXY_PORT: String(proxyPort), LEDGER_PROXY_ADMIN_PORT: String(adminPort) });
    try {
      await until(
        () => shell.output().includes('ledger-proxy listening'),
        15_000,
        () => `the proxy listening:\n${shell.output()}`,
      );
      const read = () =>
        request(`http://127.0.0.1:${proxyPort}/v1/tables/0x1/raw_item?ledger_version=100`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
          body: '{"key":"0x01"}',
        }).then(async (res) => {
          await res.body.dump();
          return res.statusCode;
        });
      await until(async () => (await read()) === 200, 10_000, 'a pinned read answered');
      await redis.connect();
      await until(async () => (await redis.dbsize()) > 0, 5000, 'the answer stored in Redis');
      expect(await within(bash(stop, {}).done, 5000, 'the stop command'), 'the stop command').toBe(0);
      await until(() => connectionRefused(redisPort), 5000, 'the Redis it started stopped');
    } finally {
      redis.disconnect();
      cleanup();
    }
  });

  it('the Redis quickstart fails clearly on a port already taken, never uses that Redis, and its stop command leaves it alone', async () => {
    const [proxyPort, adminPort] = [await freePort(), await freePort()];
    const theirs = await startRedisServer();
    const client = new Redis(theirs.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    let cleanup = (): void => undefined;
    try {
      const quickstart = await redisQuickstart(theirs.port);
      cleanup = quickstart.cleanup;
      const { script, stop } = quickstart;
      await client.set('theirs', 'untouched');
      const shell = bash(script, { LEDGER_PROXY_PORT: String(proxyPort), LEDGER_PROXY_ADMIN_PORT: String(adminPort) });
      const code = await within(shell.done, 20_000, () => `the quickstart to give up:\n${shell.output()}`);
      expect(code, shell.output()).not.toBe(0);
      expect(shell.output()).toContain('Address already in use');
      expect(shell.output()).not.toContain('ledger-proxy listening');
      expect(await connectionRefused(proxyPort), 'no proxy started').toBe(true);
      await bash(stop, {}).done;
      expect(await client.ping(), 'their Redis still runs').toBe('PONG');
      expect(await client.keys('*'), 'and holds only its own keys').toEqual(['theirs']);
    } finally {
      client.disconnect();
      cleanup();
      await theirs.stop();
    }
  });

  it('the cache purge examples answer as their comments say', async () => {
    const adminPort = await freePort();
    const { url } = await proxy([{ url: 'sim', name: 'sim' }], {
      sim: { port: 0 },
      admin: { host: '127.0.0.1', port: adminPort },
    });
    const text = block('### Purging the cache', 'sh');
    const shell = bash(relocate(text, { 8080: Number(new URL(url).port), 9090: adminPort }), {});
    expect(await shell.done, shell.output()).toBe(0);
    const lines = shell.output().split('\n');
    expect(lines[0], shell.output()).toMatch(/^x-cache: MISS\r?$/i);
    const commented = text.split('\n').filter((line) => line.startsWith('# {'));
    expect(commented).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith('{'))).toEqual(commented.map((line) => line.slice(2)));
  });

  it('the Aptos SDK snippet runs against the proxy of `LEDGER_PROXY_VENDOR=aptos npm start`', async () => {
    const { app, url } = await proxy([{ url: 'sim', name: 'sim' }], { vendor: 'aptos', sim: { port: 0 } });
    const dir = join(ROOT, '.test-build', `readme-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'sdk-snippet.ts');
    writeFileSync(
      file,
      block('## Pointing a wallet or the Aptos SDK at it', 'ts').replace('http://127.0.0.1:8080', url),
    );
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await import(pathToFileURL(file).href);
      const printed = log.mock.calls.at(-1)?.[0] as { ledgerVersion: bigint; balance: string; coin: unknown };
      expect(printed.balance).toMatch(/^\d+$/);
      expect(printed.coin).toMatchObject({ coin: { value: printed.balance } });
      // Every call reached the simulated node through the proxy: ledger info, the module ABI, the view, the resource.
      const routes = app.sim!.counters.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`);
      for (const route of [
        /^GET \/v1$/,
        /^POST \/v1\/view$/,
        /^GET \/v1\/accounts\/0x0*1\/module\/sim$/,
        /^GET \/v1\/accounts\/0x0*1\/resource\/.*CoinStore/,
      ]) {
        expect(
          routes.some((r) => route.test(r)),
          `${route} in ${JSON.stringify(routes)}`,
        ).toBe(true);
      }
    } finally {
      log.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
