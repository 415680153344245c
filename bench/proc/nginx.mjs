// nginx with proxy_cache in front of the node (lib/nginx.mjs writes its config),
// run by this small Node process so that it behaves as every bench child does: it
// answers over IPC, and nginx goes when the orchestrator goes (nginx itself would
// outlive it). nginx runs in the foreground (`daemon off`) with its own temporary
// prefix, one worker, pinned to the servers' CPU; the temporary prefix (config,
// cache, error log) is removed when it stops.
// BENCH_PARAMS: { bin, upstream, cpu, cache (default true; false: a plain proxy_pass) }. info: { url, pid (the worker: it does the work), masterPid, dir }.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childParams, pinned, serveRpc } from '../lib/child.mjs';
import { nginxConf } from '../lib/nginx.mjs';
import { freePort } from '../lib/redis.mjs';

const { bin, upstream, cpu, cache = true } = childParams();
const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
let nginx = null;
let workerPid = null;

const canConnect = (port) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const errorLog = () => {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8').trim().split('\n').slice(-5).join(' | ');
  } catch {
    return '(no error log)';
  }
};

/** The pids whose parent is `ppid` (from /proc). */
function childrenOf(ppid) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) found.push(Number(name));
    } catch {}
  }
  return found;
}

/** Starts nginx on a free port; a port another process took meanwhile is tried again with another. */
async function start() {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    const runAsRoot = process.getuid?.() === 0;
    writeFileSync(conf, nginxConf({ port, upstream, dir, runAsRoot, cache }));
    const [cmd, ...args] = pinned(cpu, [
      bin,
      '-p',
      `${dir}/`,
      '-c',
      conf,
      '-e',
      join(dir, 'error.log'),
      '-g',
      `daemon off; pid ${join(dir, 'nginx.pid')};`,
    ]);
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    let gone = null;
    exited.then((how) => (gone = how));
    const deadline = Date.now() + 10_000;
    while (gone === null && Date.now() < deadline && !(await canConnect(port)))
      await new Promise((resolve) => setTimeout(resolve, 50));
    if (gone === null && (await canConnect(port))) {
      nginx = { child, exited, port };
      break;
    }
    child.kill('SIGKILL');
    await exited;
    if (attempt >= 3 || !/Address already in use/.test(errorLog()))
      throw new Error(`nginx did not start (${gone ?? 'no answer in 10 s'}): ${errorLog()}`);
  }
  // worker_processes 1: the master's one child is the worker.
  for (let i = 0; i < 100 && workerPid === null; i++) {
    workerPid = childrenOf(nginx.child.pid)[0] ?? null;
    if (workerPid === null) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (workerPid === null) throw new Error('nginx has no worker process');
}

/** Kills nginx at once (the orchestrator went away, or this process exits). */
function kill() {
  for (const pid of [nginx?.child.pid, workerPid]) {
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', kill);

try {
  await start();
} catch (err) {
  kill();
  throw err;
}

serveRpc(
  {
    /** nginx's fast shutdown (SIGTERM: the master stops its worker and exits), then the prefix goes. */
    async shutdown() {
      nginx.child.kill('SIGTERM');
      const timer = setTimeout(kill, 5_000);
      await nginx.exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  },
  { url: `http://127.0.0.1:${nginx.port}`, pid: workerPid, masterPid: nginx.child.pid, dir },
);
