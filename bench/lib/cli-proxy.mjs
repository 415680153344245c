// The proxy as an operator runs it: `node dist/main.js --config <file>`, with the
// config written to a temporary YAML file and stdout (the JSON log lines) into a
// pipe this process drains and counts, as a container's log collector would. Used where the process layout matters (server.workers: the primary forks
// the workers, which share the port).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { pinned } from './child.mjs';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** A port free on 127.0.0.1 right now. */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The pids of `pid`'s child processes (Linux /proc; [] elsewhere). */
function childPids(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * Starts the CLI with `config` (merged over 127.0.0.1:<free port>, admin off unless given,
 * log level info), pinned to `cpu` (a taskset list such as '0,1'). Resolves once
 * every process that serves has logged 'ledger-proxy listening'.
 */
export async function startCliProxy({ config, cpu, workers = 1, timeoutMs = 30_000 }) {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-proxy-bench-cli-'));
  const port = await freePort();
  const full = {
    ...config,
    server: { host: '127.0.0.1', port, workers, ...config.server },
    admin: config.admin ?? { port: 0 },
    log: { level: 'info' },
  };
  const file = join(dir, 'config.yaml');
  writeFileSync(file, YAML.stringify(full));
  const [cmd, ...args] = pinned(cpu, [process.execPath, MAIN, '--config', file]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Drain and count the log lines; watch for each serving process's 'listening' line.
  let lines = 0;
  let listeningLines = 0;
  let tail = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text) => {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
    if (listeningLines < workers) {
      const all = tail + text;
      listeningLines += (all.match(/"msg":"ledger-proxy listening"/g) ?? []).length;
      tail = all.slice(all.lastIndexOf('\n') + 1);
    }
  });
  const listening = () => listeningLines;
  const started = Date.now();
  while (listening() < workers) {
    if (child.exitCode !== null) throw new Error(`ledger-proxy exited (${child.exitCode}) before listening`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`ledger-proxy (workers ${workers}) did not listen in ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    info: { url: `http://127.0.0.1:${port}`, pid: child.pid },
    pid: child.pid,
    /** The primary and every worker (with one worker, the one process). */
    pids: () => [child.pid, ...childPids(child.pid)],
    logLines: () => lines,
    async stop() {
      if (child.exitCode === null) {
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
