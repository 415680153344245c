// log.format (json | pretty | auto): the real CLI's stdout in each format. Pretty
// is one line a request, `{method} {path} {status} {cache} {ms}ms {reqId}` and
// the line's other fields after it; JSON is one object a line. Either way the
// access line names the version asked (or `latest`), never the whole query, and
// an error is under `err`, serialized by pino. The observability page's examples
// of the access line are a real line's keys and value shapes.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { request } from 'undici';
import { describe, expect, inject, it } from 'vitest';
import { effectiveLogFormat, prettyLines } from '../../src/process/logger.js';
import { type Cli, cliConfig, configFile, jsonLines, runCli, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { call, capturedLog, proxy, QUIET_ROUTING, rawItem, sim } from '../helpers/proxy.js';
import { until, within } from '../helpers/until.js';

useCliBuild();

async function startWithFormat(format: string | undefined): Promise<Cli> {
  const node = await sim();
  const port = await freePort();
  const log = format === undefined ? {} : { format };
  return startCli(configFile(`log-${format ?? 'default'}.yaml`, cliConfig(port, node, { log })), port);
}

/** The lines of the CLI's output that contain `text`, once there is at least one. */
async function linesWith(cli: Cli, text: string): Promise<string[]> {
  const matching = (): string[] =>
    cli
      .output()
      .split('\n')
      .filter((line) => line.includes(text));
  await until(
    () => matching().length > 0,
    5000,
    () => `a log line with ${text}:\n${cli.output()}`,
  );
  return matching();
}

describe('log.format', () => {
  it('pretty (on a pipe too): one line a request, method path status cache ms and the request id first', async () => {
    const cli = await startWithFormat('pretty');
    const pinned = await rawItem(cli.url, '0x01', { version: 1000 });
    const latest = await call(cli.url, '/v1/estimate_gas_price?foo=secret-ish');
    for (const reply of [pinned, latest]) expect(reply.status).toBe(200);

    const pinnedId = pinned.headers['x-request-id'] as string;
    const [pinnedLine, ...more] = await linesWith(cli, pinnedId);
    expect(more).toEqual([]);
    const handle = `/v1/tables/0x${'ab'.repeat(32)}/raw_item`;
    expect(pinnedLine).toMatch(
      new RegExp(`INFO.*: POST ${handle} 200 MISS \\d+(\\.\\d+)?ms ${pinnedId} \\{.*"version":"1000"`),
    );
    // The message's fields are not repeated after it.
    expect(pinnedLine).not.toMatch(/"(method|path|status|cache|ms|reqId)":/);

    const [latestLine] = await linesWith(cli, latest.headers['x-request-id'] as string);
    expect(latestLine).toMatch(/: GET \/v1\/estimate_gas_price 200 BYPASS [\d.]+ms \S+ \{.*"version":"latest"/);
    expect(cli.output()).not.toContain('secret-ish');
    // No line of the output is a JSON object: every one is pretty.
    expect(
      cli
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{')),
    ).toEqual([]);
  });

  it('json, and auto on a pipe: one JSON object a line, the version asked or latest', async () => {
    for (const format of ['json', undefined]) {
      const cli = await startWithFormat(format);
      const pinned = await rawItem(cli.url, '0x01', { version: 1000 });
      const latest = await rawItem(cli.url, '0x01');
      for (const reply of [pinned, latest]) {
        const [line, ...more] = await linesWith(cli, reply.headers['x-request-id'] as string);
        expect(more).toEqual([]);
        const parsed = JSON.parse(line);
        expect(parsed).toMatchObject({ level: 30, msg: 'request', method: 'POST', status: 200 });
        expect(parsed.version).toBe(reply === pinned ? '1000' : 'latest');
        expect(parsed.path).not.toContain('?');
      }
      cli.child.kill('SIGTERM');
      await cli.exited;
    }
  });

  it('auto on a terminal (a pseudo-terminal from script(1)): pretty', async () => {
    const node = await sim();
    const port = await freePort();
    const file = configFile('log-tty.yaml', cliConfig(port, node));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEDGER_PROXY_')));
    const main = join(inject('cliBuild'), 'main.js');
    // exec: the proxy is script's child, so it can be stopped by its own pid.
    const terminal = spawn('script', ['-qefc', `exec ${process.execPath} ${main} --config ${file}`, '/dev/null'], {
      env: { ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    terminal.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const exited = new Promise((done) => terminal.once('exit', done));
    try {
      const answers = async (): Promise<boolean> =>
        request(`http://127.0.0.1:${port}/v1`, { reset: true }).then(
          async (res) => {
            await res.body.arrayBuffer();
            return res.statusCode === 200;
          },
          () => false,
        );
      await until(answers, 15_000, () => `the proxy on a terminal to answer:\n${out}`);
      const reply = await rawItem(`http://127.0.0.1:${port}`, '0x01', { version: 1000 });
      const id = reply.headers['x-request-id'] as string;
      await until(
        () => out.includes(id),
        5000,
        () => `its access line:\n${out}`,
      );
      // Without the terminal's colour codes, if any.
      const line = out
        .replace(/\u001b\[[0-9;]*m/g, '')
        .split(/\r?\n/)
        .find((l) => l.includes(id))!;
      expect(line).toMatch(new RegExp(`: POST /v1/tables/0x[0-9a-f]+/raw_item 200 MISS [\\d.]+ms ${id} \\{`));
    } finally {
      const children = readFileSync(`/proc/${terminal.pid}/task/${terminal.pid}/children`, 'utf8').trim();
      for (const pid of children.split(' ').filter((p) => p !== '')) process.kill(Number(pid), 'SIGTERM');
      await exited;
    }
  });

  it('LEDGER_PROXY_LOG_FORMAT overrides the file, and a value outside json, pretty, auto is refused', async () => {
    const file = configFile('log-env.yaml', 'log:\n  format: json\n');
    const overridden = await runCli(['--check', '--config', file], { LEDGER_PROXY_LOG_FORMAT: 'pretty' });
    expect(overridden.code).toBe(0);
    expect(overridden.stdout).toMatch(/^ {2}format: pretty$/m);
    const refused = await runCli(['--check', '--config', file], { LEDGER_PROXY_LOG_FORMAT: 'colour' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('log.format');
  });

  it('a log reader that stops reading holds no reply: its lines wait, then come whole, and the last at exit', async () => {
    const cli = await startWithFormat('json');
    const stdout = cli.child.stdout!;
    stdout.pause();
    // Each a node call, so each an access line at info: several times what the pipe
    // (64 KiB) and the paused reader's buffer hold together.
    const ids: string[] = [];
    const perRound = 20;
    for (let round = 0; round < 100; round++) {
      const replies = await within(
        Promise.all(
          Array.from({ length: perRound }, (_, i) =>
            rawItem(cli.url, `0x${(round * perRound + i).toString(16).padStart(8, '0')}`),
          ),
        ),
        5000,
        `round ${round} answered while the log is not read`,
      );
      for (const reply of replies) {
        // The sim holds three keys in four: a 404 is a node's answer too, and has its line.
        expect([200, 404]).toContain(reply.status);
        ids.push(reply.headers['x-request-id'] as string);
      }
    }
    const paused = cli.output().length;
    stdout.resume();
    const accessLines = (): Array<Record<string, unknown>> =>
      jsonLines(cli.output()).filter((line) => line.msg === 'request');
    await until(
      () => accessLines().length >= ids.length,
      10_000,
      () => `${ids.length} access lines, got ${accessLines().length}`,
    );
    // The pipe was full: most of the lines waited in the proxy while nothing read them.
    expect(cli.output().length - paused).toBeGreaterThan(4 * (64 * 1024 + stdout.readableHighWaterMark));
    // Every line whole (jsonLines parses each), and each request's once.
    expect(accessLines().map((line) => line.reqId)).toEqual(expect.arrayContaining(ids));
    expect(new Set(accessLines().map((line) => line.reqId)).size).toBe(accessLines().length);
    expect(
      cli
        .output()
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('{')),
    ).toEqual([]);
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
    expect(jsonLines(cli.output()).at(-1)?.msg).toMatch(/^stopped on SIGTERM/);
  });
});

describe('the pretty lines', () => {
  const render = (level: 'info' | 'warn', fields: Record<string, unknown>, msg: string): string => {
    let out = '';
    pino({ level: 'debug' }, { write: (line: string) => (out += prettyLines(false)(line)) })[level](fields, msg);
    return out;
  };

  it('auto is pretty on a terminal and JSON elsewhere; json and pretty are what they say', () => {
    expect([true, false].map((tty) => effectiveLogFormat('auto', tty))).toEqual(['pretty', 'json']);
    expect([true, false].map((tty) => effectiveLogFormat('json', tty))).toEqual(['json', 'json']);
    expect([true, false].map((tty) => effectiveLogFormat('pretty', tty))).toEqual(['pretty', 'pretty']);
  });

  it('another line keeps its message and every field; an error shows its stack below it', () => {
    const line = render('warn', { reqId: 'r-1', status: 503, upstream: 'node0' }, 'something else');
    expect(line.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(line).toMatch(/WARN.*: something else \{"reqId":"r-1","status":503,"upstream":"node0"\}/);

    const failed = render('warn', { err: new Error('redis went away') }, 'redis failure; serving without it');
    expect(failed).toMatch(/redis failure; serving without it[\s\S]*redis went away[\s\S]*\n\s+at /);
  });
});

describe("the observability page's access line", () => {
  const PAGE = join(import.meta.dirname, '../../docs/operations/observability.md');

  /** The JSON and the pretty example of the access line, as the page shows them. */
  function documented(): { json: Record<string, unknown>; pretty: string } {
    const page = readFileSync(PAGE, 'utf8');
    const schema = page.indexOf('**The access line**');
    const open = page.indexOf('```json\n', schema);
    const json = JSON.parse(page.slice(open + 8, page.indexOf('\n```', open))) as Record<string, unknown>;
    const pretty = /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: .*$/m.exec(page)?.[0];
    expect(pretty, 'a pretty access line on the page').toBeDefined();
    return { json, pretty: pretty! };
  }

  /** A value's shape: its JSON type, and for a string that names a thing, the thing. */
  const shape = (value: unknown): string => (Array.isArray(value) ? 'array' : typeof value);

  it("has a real line's keys, value types and values for the request it shows", async () => {
    const { json, pretty } = documented();
    const node = await sim();
    const { logger, lines } = capturedLog();
    // Unnamed, as in a first config: the names the page shows are the defaults.
    const { url } = await proxy([{ url: node.url, name: undefined }], { routing: QUIET_ROUTING }, { logger });
    const reply = await call(url, `${json.path}?ledger_version=${json.version}`);
    expect(reply.status).toBe(json.status);
    expect(node.counters.total).toBeGreaterThan(0);
    const line = lines.find((l) => l.msg === 'request')!;
    expect(line, JSON.stringify(lines)).toBeDefined();

    expect(Object.keys(json).sort()).toEqual(Object.keys(line).sort());
    for (const key of Object.keys(line)) expect(shape(json[key]), key).toBe(shape(line[key]));
    // What the request shown decides: the same on the page as in the line.
    for (const key of [
      'level',
      'method',
      'endpoint',
      'path',
      'version',
      'client',
      'status',
      'cache',
      'upstream',
      'msg',
    ])
      expect(json[key], key).toEqual(line[key]);

    // The pretty form of that line: the same head, and the same fields after it.
    const rendered = prettyLines(false)(JSON.stringify(line)).trim();
    const head = (text: string): string => text.replace(/^\[[^\]]+\] /, '').replace(/ [\d.]+ms \S+ \{.*$/, '');
    expect(head(pretty)).toBe(head(rendered));
    const fields = (text: string): Record<string, unknown> => JSON.parse(text.slice(text.indexOf(' {') + 1));
    const [shown, real] = [fields(pretty), fields(rendered)];
    expect(Object.keys(shown)).toEqual(Object.keys(real));
    for (const key of Object.keys(real)) expect(shape(shown[key]), key).toBe(shape(real[key]));
    for (const key of ['endpoint', 'version', 'client', 'upstream']) expect(shown[key], key).toEqual(real[key]);
  });
});
