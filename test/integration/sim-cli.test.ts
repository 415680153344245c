// The sim CLI as an operator uses it: --help exits 0 and lists the fault modes,
// bad arguments exit 2, --fault answers every request with the fault,
// --prune-window prunes. Most cases run runSimCli (main.ts minus signals and exit)
// in-process; the last block runs the real entry point, built once for the run.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { runSimCli, type SimStarted } from '../../src/sim/cli.js';
import { SIM_FAULT_MODES } from '../../src/sim/index.js';

const started: SimStarted[] = [];

afterEach(async () => {
  for (const { sim } of started.splice(0)) await sim.close();
});

function capture(): { out: string[]; err: string[]; io: { stdout(text: string): void; stderr(text: string): void } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (text) => out.push(text), stderr: (text) => err.push(text) } };
}

async function start(argv: string[]): Promise<SimStarted> {
  const result = await runSimCli(['--port', '0', ...argv], capture().io);
  if (typeof result === 'number') throw new Error(`exit ${result}`);
  started.push(result);
  return result;
}

describe('sim CLI', () => {
  it('--help prints the usage with every option and fault mode, and exits 0', async () => {
    const { out, err, io } = capture();
    expect(await runSimCli(['--help'], io)).toBe(0);
    const usage = out.join('');
    for (const flag of ['--fault', '--prune-window', '--versions-per-second', '--start-version', '--help'])
      expect(usage).toContain(flag);
    for (const mode of SIM_FAULT_MODES) expect(usage).toContain(mode);
    expect(err).toEqual([]);
  });

  it('refuses unknown options and fault modes with exit 2 and the usage on stderr', async () => {
    for (const argv of [['--bogus'], ['--fault', 'explode']]) {
      const { out, err, io } = capture();
      expect(await runSimCli(argv, io)).toBe(2);
      expect(err.join('')).toContain('usage: sim');
      expect(out).toEqual([]);
    }
  });

  it('--fault status500 answers every request, GET /v1 included, with the fault', async () => {
    const { sim } = await start(['--fault', 'status500']);
    for (const path of ['/v1', '/v1/accounts/0x1/module/sim']) {
      const answer = await request(`${sim.url}${path}`);
      expect(answer.statusCode).toBe(500);
      expect(await answer.body.json()).toMatchObject({ error_code: 'internal_error' });
    }
  });

  it('--prune-window and --start-version give a node that has pruned', async () => {
    const { sim } = await start(['--start-version', '5000', '--prune-window', '1000']);
    const answer = await request(`${sim.url}/v1`);
    expect(await answer.body.json()).toMatchObject({ ledger_version: '5000', oldest_ledger_version: '4000' });
    const pruned = await request(`${sim.url}/v1/view?ledger_version=100`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: ['0x1'] }),
    });
    expect(pruned.statusCode).toBe(410);
    expect(await pruned.body.json()).toMatchObject({ error_code: 'version_pruned' });
  });
});

describe('node sim/main.js (the compiled entry point)', () => {
  let main: string;

  beforeAll(() => {
    // Built once for the run, apart from dist/ (test/global-setup.ts).
    main = join(inject('cliBuild'), 'sim', 'main.js');
  });

  const run = (argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((done, fail) => {
      execFile(process.execPath, [main, ...argv], { timeout: 10_000 }, (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') fail(err);
        else done({ code: err === null ? 0 : (err.code as number), stdout, stderr });
      });
    });

  it('--help exits 0 with the usage on stdout; an unknown option exits 2', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--fault MODE');
    expect(help.stderr).toBe('');
    const bad = await run(['--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: sim');
  });

  it('starts with --fault, answers with it, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [main, '--port', '0', '--fault', 'status500'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      // The first log line names the url (port 0: any free port).
      const url = await new Promise<string>((done, fail) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /"url":"(http:[^"]+)"/.exec(out);
          if (match !== null) done(match[1]);
        });
        child.once('exit', () => fail(new Error(`exited before listening: ${out}`)));
      });
      const answer = await request(`${url}/v1`);
      expect(answer.statusCode).toBe(500);
      await answer.body.dump();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
