// The docs' commands do what they say, run as written (only the ports moved to
// free ones and dist/ to the test build, so nothing here meets a proxy someone
// runs on 8080): the README's quickstart curls and its SDK snippet; on the getting
// started page every curl of "Try it", the Redis quickstart (a Redis of its own, a
// clear failure on a port already taken, a stop command that stops only it),
// `npm run sim` (its ledger advances) and the node-failure walkthrough (its answers,
// and nothing left running after it); the cache purge examples of the caching page;
// the deploy page's `--check` of the example config, and the README's of a config
// started from it;
// and the SDK snippet of the clients page, each run by `node` as a reader would.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectionRefused } from '../helpers/probe.js';
import { freePort } from '../helpers/free-port.js';
import { proxy } from '../helpers/proxy.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { until, within } from '../helpers/until.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (page: string): string => readFileSync(join(ROOT, page), 'utf8');
const README = 'README.md';
const GETTING_STARTED = 'docs/getting-started.md';

/** The first ```lang block after `marker` on `page`. */
function block(page: string, marker: string, lang: string): string {
  const text = read(page);
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${page} has no "${marker}"`);
  const open = text.indexOf(`\`\`\`${lang}\n`, at);
  if (open < 0) throw new Error(`${page} has no ${lang} block after "${marker}"`);
  const close = text.indexOf('\n```', open + 4);
  return text.slice(open + lang.length + 4, close + 1);
}

/**
 * The commands of a shell block, grouped under the comment that introduces them:
 * a group is its comment lines and the commands that follow them, up to the next comment.
 */
function commentedGroups(text: string): Array<{ comment: string; script: string }> {
  const groups: Array<{ comment: string; script: string }> = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) {
      const last = groups.at(-1);
      if (last !== undefined && last.script === '') last.comment += ` ${line.slice(1).trim()}`;
      else groups.push({ comment: line.slice(1).trim(), script: '' });
    } else if (line.trim() !== '') {
      if (groups.length === 0) throw new Error(`a command before any comment: ${line}`);
      groups.at(-1)!.script += `${line}\n`;
    }
  }
  return groups;
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
 * The getting started page's Redis quickstart block and its stop command, with the Redis port
 * the page names moved to `port` (its pidfile's name with it), `npm start`
 * run as the test build on config/default.yaml with the built-in node moved off
 * 8081; `cleanup` removes what it wrote.
 */
async function redisQuickstart(port: number): Promise<{ script: string; stop: string; cleanup(): void }> {
  const marker = '## With Redis as the shared second tier';
  const text = block(GETTING_STARTED, marker, 'sh').trim();
  const named = Number(/--port (\d+)/.exec(text)?.[1]);
  const page = read(GETTING_STARTED);
  const prose = page.slice(page.indexOf(marker), page.indexOf('```sh', page.indexOf(marker)));
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

describe('the commands of the docs', () => {
  it('the node-failure walkthrough answers as its comments say, and leaves nothing running', async () => {
    const [proxyPort, simPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    const script = relocate(block(GETTING_STARTED, '## Version checks and a node failure', 'sh'), {
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

  it("the deploy page's --check of the example config says valid", async () => {
    const script = relocate(block('docs/operations/deploy.md', '### Checking a config', 'sh'), {});
    const shell = bash(script, {});
    expect(await within(shell.done, 20_000, () => `--check to end:\n${shell.output()}`), shell.output()).toBe(0);
    expect(shell.output().trim().split('\n').at(-1)).toBe('valid');
  });

  it("the README's --check of a config started from the production example exits 0", async () => {
    const readme = read(README);
    const [, example, command] = /start from\s+\[`(config\/[^`]+)`\][\s\S]*?check it with `([^`]+)`/.exec(readme) ?? [];
    expect(example, 'the README names the example to start from').toBe('config/production.example.yaml');
    const config = /--config (\S+)$/.exec(command)?.[1];
    expect(config, `the README's command checks a file: ${command}`).toBeDefined();
    // The reader's copy of the example, under the name the command gives, in a folder of its own.
    const dir = join(ROOT, '.test-build', `readme-check-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(join(dir, config!), read(example));
      const shell = bash(`cd ${dir} && ${relocate(command, {})}`, {});
      expect(await within(shell.done, 20_000, () => `--check to end:\n${shell.output()}`), shell.output()).toBe(0);
      expect(shell.output()).toContain(`# ${config}: valid.`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    // Read before anything starts: a page without the block starts nothing.
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
    const text = block('docs/caching.md', '## Purging the cache', 'sh');
    const shell = bash(relocate(text, { 8080: Number(new URL(url).port), 9090: adminPort }), {});
    expect(await shell.done, shell.output()).toBe(0);
    const lines = shell.output().split('\n');
    expect(lines[0], shell.output()).toMatch(/^x-cache: MISS\r?$/i);
    const commented = text.split('\n').filter((line) => line.startsWith('# {'));
    expect(commented).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith('{'))).toEqual(commented.map((line) => line.slice(2)));
  });

  it.each([
    [README, '## Pointing the Aptos SDK at it'],
    ['docs/clients.md', '## Pointing a wallet or the Aptos SDK at it'],
  ])(
    'the Aptos SDK snippet of %s runs with node against the proxy of `LEDGER_PROXY_VENDOR=aptos npm start`',
    async (page, marker) => {
      const { app, url } = await proxy([{ url: 'sim', name: 'sim' }], { vendor: 'aptos', sim: { port: 0 } });
      const dir = join(ROOT, '.test-build', `docs-sdk-${process.pid}-${page.replace(/\W/g, '-')}`);
      mkdirSync(dir, { recursive: true });
      try {
        // The name the page gives it, in a folder of this checkout, where npm ci installed the SDK.
        const file = join(dir, 'sdk-example.mjs');
        writeFileSync(file, block(page, marker, 'js').replace('http://127.0.0.1:8080', url));
        const shell = bash(`exec node ${file}`, {});
        expect(await within(shell.done, 30_000, () => `the snippet to end:\n${shell.output()}`), shell.output()).toBe(
          0,
        );
        const balance = /balance: '(\d+)'/.exec(shell.output())?.[1];
        expect(balance, shell.output()).toBeDefined();
        expect(shell.output()).toContain(`coin: { coin: { value: '${balance}' }`);
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
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  /** Runs each commented group of `text` against a fresh proxy on the built-in sim, as `npm start` serves it. */
  async function runGroups(text: string): Promise<Map<string, string[]>> {
    const { url } = await proxy([{ url: 'sim', name: 'sim' }], { sim: { port: 0 } });
    const outputs = new Map<string, string[]>();
    for (const { comment, script } of commentedGroups(text)) {
      // Each group twice: a pinned read's second run is its cache hit.
      for (let run = 0; run < 2; run++) {
        const shell = bash(relocate(script, { 8080: Number(new URL(url).port) }), {});
        expect(await within(shell.done, 15_000, () => `"${comment}" to end`), shell.output()).toBe(0);
        outputs.set(comment, [...(outputs.get(comment) ?? []), shell.output()]);
      }
    }
    return outputs;
  }

  /** Checks each group's outputs (first run, second run) against what its comment, found by `start`, says. */
  function expectGroups(
    outputs: Map<string, string[]>,
    expected: Array<[start: string, check: (first: string, second: string) => void]>,
  ): void {
    const comments = [...outputs.keys()];
    for (const comment of comments)
      expect(
        expected.some(([start]) => comment.startsWith(start)),
        `a check for the command under "# ${comment}"`,
      ).toBe(true);
    for (const [start, check] of expected) {
      const comment = comments.find((c) => c.startsWith(start));
      expect(comment, `a command under a comment starting "# ${start}"`).toBeDefined();
      const [first, second] = outputs.get(comment!)!;
      check(first, second);
    }
  }

  it('the README quickstart curls answer as their comments say', async () => {
    const quickstart = block(README, 'Then, in another terminal', 'sh');
    expectGroups(await runGroups(quickstart), [
      [
        'a pinned read',
        (first, second) => {
          expect(first).toMatch(/^HTTP\/1\.1 200/m);
          expect(first).toMatch(/^x-cache: MISS/im);
          expect(second).toMatch(/^x-cache: HIT/im);
        },
      ],
      ['a latest read', (first) => expect(first.trim()).toBe('["42"]')],
      ['passthrough', (first) => expect(JSON.parse(first)).toMatchObject({ chain_id: 4 })],
    ]);
  });

  it('every curl of "Try it" answers as its comment says', async () => {
    expectGroups(await runGroups(block(GETTING_STARTED, '## Try it', 'sh')), [
      [
        'raw table item, pinned',
        (first, second) => {
          expect(first).toMatch(/^HTTP\/1\.1 200/m);
          expect(first).toMatch(/^x-cache: MISS/im);
          expect(second).toMatch(/^x-cache: HIT/im);
          expect(second).toMatch(/^x-cache-tier: memory/im);
        },
      ],
      ['raw table item, latest', (first) => expect(first).toMatch(/^HTTP\/1\.1 200/m)],
      ['an absent item', (first) => expect(JSON.parse(first)).toMatchObject({ error_code: 'table_item_not_found' })],
      ['raw_item answers only BCS', (first) => expect(JSON.parse(first)).toMatchObject({ error_code: 'api_disabled' })],
      [
        'view, JSON in and out',
        (first) => {
          expect(first).toMatch(/^HTTP\/1\.1 200/m);
          expect(first.trim().endsWith('["42"]')).toBe(true);
        },
      ],
      // 0x1::sim::pair(7) is (7 / 2, 7 is even): uleb128 count 2, u64 3 (8 bytes, little-endian), bool false.
      ['view with a BCS answer', (first) => expect(first.trim()).toBe('02 03 00 00 00 00 00 00 00 00')],
      ['view with a BCS request body', (first) => expect(first.trim()).toBe('["42"]')],
      [
        'a Move abort',
        (first) => expect(JSON.parse(first)).toMatchObject({ error_code: 'invalid_input', vm_error_code: 4016 }),
      ],
      [
        'a pruned or not yet reached version',
        (first) => expect(JSON.parse(first)).toMatchObject({ error_code: 'version_not_found' }),
      ],
      [
        'wallet reads are cached too',
        (first, second) => {
          expect(first).toMatch(/^x-cache: MISS/im);
          expect(first).toMatch(/^x-node-cursor: /im);
          expect(second).toMatch(/^x-cache: HIT/im);
          expect(first).toContain('"bytecode"');
          expect(first).toMatch(/"version":"100"/);
        },
      ],
      [
        'passthrough',
        (first) => {
          expect(first).toMatch(/"chain_id":4/);
          expect(first).toContain('gas_estimate');
        },
      ],
    ]);
  });
});
