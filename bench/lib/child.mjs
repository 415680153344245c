// Child processes with a tiny request/reply protocol over Node's IPC channel.
// Parent side: spawnChild(); child side: serveRpc(). Every child exits when the
// parent goes away (IPC disconnect), so an interrupted bench leaves nothing behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** taskset, when present and there are at least 2 CPUs: pins servers and load apart. */
export const CAN_PIN = availableParallelism() >= 2 && ['/usr/bin/taskset', '/bin/taskset'].some((p) => existsSync(p));

/** The command line for `argv` pinned to `cpu` (a taskset list such as '0'), or unpinned. */
export function pinned(cpu, argv) {
  return CAN_PIN && cpu !== undefined ? ['taskset', '-c', String(cpu), ...argv] : argv;
}

/**
 * Starts `node [nodeArgs] script` (pinned to `cpu` when possible) and waits for
 * its { ready } message. `params` reaches the child as JSON in BENCH_PARAMS;
 * `stdout`: 'inherit', or 'count' (a pipe this process drains, counting lines:
 * handle.stdoutLines()).
 */
export async function spawnChild(
  script,
  { cpu, params = {}, nodeArgs = [], name = script, readyTimeoutMs = 30_000, stdout = 'inherit' } = {},
) {
  const [cmd, ...args] = pinned(cpu, [process.execPath, ...nodeArgs, script]);
  const child = spawn(cmd, args, {
    stdio: ['ignore', stdout === 'count' ? 'pipe' : stdout, 'inherit', 'ipc'],
    env: { ...process.env, BENCH_PARAMS: JSON.stringify(params) },
  });
  const lines = stdout === 'count' ? countingLines(child.stdout) : null;
  const pending = new Map();
  let nextId = 1;
  let exited = false;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  exit.then(({ code, signal }) => {
    exited = true;
    for (const { reject } of pending.values()) reject(new Error(`${name} exited (${code ?? signal}) during a call`));
    pending.clear();
  });
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not become ready in ${readyTimeoutMs} ms`)),
      readyTimeoutMs,
    );
    child.on('message', (msg) => {
      if (msg?.ready) {
        clearTimeout(timer);
        resolve(msg.info);
        return;
      }
      const call = msg && pending.get(msg.id);
      if (!call) return;
      pending.delete(msg.id);
      if (msg.error) call.reject(new Error(`${name}.${call.method}: ${msg.error}`));
      else call.resolve(msg.result);
    });
    exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready`));
    });
  });
  const info = await ready;
  return {
    info,
    pid: child.pid,
    stdoutLines: () => lines?.() ?? null,
    call(method, callParams = {}) {
      if (exited) return Promise.reject(new Error(`${name} has exited`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, method });
        child.send({ id, method, params: callParams });
      });
    },
    /** Asks the child to shut down (its 'shutdown' handler, then exit); SIGKILL after graceMs. */
    async stop(graceMs = 10_000) {
      if (exited) return exit;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.send({ id: 0, method: 'shutdown', params: {} });
      const result = await exit;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Child side: answer calls with `handlers[method](params)`; 'shutdown' runs handlers.shutdown then exits 0. */
export function serveRpc(handlers, info = {}) {
  process.on('disconnect', () => process.exit(0));
  // A parent gone while this child started (before this listener) sends no event now.
  if (!process.connected) process.exit(0);
  process.on('message', async (msg) => {
    if (!msg || typeof msg.method !== 'string') return;
    if (msg.method === 'shutdown') {
      try {
        await handlers.shutdown?.();
      } finally {
        process.exit(0);
      }
      return;
    }
    const handler = handlers[msg.method];
    try {
      if (!handler) throw new Error(`unknown method ${msg.method}`);
      const result = await handler(msg.params ?? {});
      process.send({ id: msg.id, result });
    } catch (err) {
      process.send({ id: msg.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  });
  process.send({ ready: true, info });
}

/** CPU time this process has used so far, every thread, user + system, in µs (finer than /proc's 10 ms ticks). */
export function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** The parameters the parent passed to this child. */
export function childParams() {
  return JSON.parse(process.env.BENCH_PARAMS ?? '{}');
}

/**
 * Drains a readable (a child's stdout pipe, as a log collector would) and counts
 * its lines; returns the counter.
 */
function countingLines(stream) {
  let n = 0;
  stream.on('data', (chunk) => {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) n++;
  });
  return () => n;
}
