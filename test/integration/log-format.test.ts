// log.format (json | pretty | auto): the real CLI's stdout in each format. Pretty
// is one line a request, `{method} {path} {status} {cache} {ms}ms {reqId}` and
// the line's other fields after it; JSON is one object a line. Either way the
// access line names the version asked (or `latest`), never the whole query, and
// an error is under `err`, serialized by pino.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { effectiveLogFormat, prettyLines } from '../../src/process/logger.js';
import { type Cli, cliConfig, configFile, runCli, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { call, rawItem, sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

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

  it('LEDGER_PROXY_LOG_FORMAT overrides the file, and a value outside json, pretty, auto is refused', async () => {
    const file = configFile('log-env.yaml', 'log:\n  format: json\n');
    const overridden = await runCli(['--check', '--config', file], { LEDGER_PROXY_LOG_FORMAT: 'pretty' });
    expect(overridden.code).toBe(0);
    expect(overridden.stdout).toMatch(/^ {2}format: pretty$/m);
    const refused = await runCli(['--check', '--config', file], { LEDGER_PROXY_LOG_FORMAT: 'colour' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('log.format');
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
