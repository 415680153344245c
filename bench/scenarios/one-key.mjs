// Scenario 1w: one key, driven by wrk. The memory hit of one request, asked again
// and again by wrk (C, one thread, 50 connections, pinned to the load CPU) of the
// proxy, of nginx proxy_cache holding the same answer and of the socket limit
// writing the proxy's captured reply, in alternating rounds. Each server's CPU is
// metered, so every figure is per server CPU-second: wrk costs far less per request
// than the bench's own load generator, and one key takes the key set's memory out
// of the comparison, which scenario 1n's Zipf keys keep in. The rows: proxy ÷ nginx
// (the route's anchor target) and proxy ÷ the socket limit (target 0.7). It runs
// where wrk and nginx are installed, and is skipped, with the reason, where not.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAN_PIN, pinned } from '../lib/child.mjs';
import { call, cannedReply } from '../lib/http.mjs';
import { cpuMeter, exitedChildrenSeconds, round } from '../lib/procstat.mjs';
import { meets } from '../lib/report.mjs';
import { HIT_ROUTES, routeItems } from '../lib/routes.mjs';
import { CLIENT_CPU } from '../lib/services.mjs';
import { anchorAvailable, startAnchor } from './anchor.mjs';
import { compare, cpuMicrosPerRequest, prime, upstreamReads } from './hit-throughput.mjs';

/** The routes a wallet reads hot: the issue's single-key comparison names these three. */
const ROUTES = ['raw_item', 'view_json', 'view_bcs'];
const CONNECTIONS = 50;
const SOCKET_LIMIT_TARGET = 0.7;

/** `wrk --version`'s first line when wrk runs, else null. */
function wrkVersion() {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error) return null;
  return `${r.stdout}${r.stderr}`.split('\n')[0].trim() || null;
}

/** A Lua string literal holding `bytes` exactly (decimal escapes: a BCS body is binary). */
const luaBytes = (bytes) => `"${[...bytes].map((b) => `\\${b}`).join('')}"`;

/** The wrk script that sends `request` (lib/requests.mjs's shape) on every request. */
function wrkScript(request) {
  const lines = [`wrk.method = ${luaBytes(Buffer.from(request.method ?? 'POST'))}`];
  lines.push(`wrk.path = ${luaBytes(Buffer.from(request.path))}`);
  for (const [name, value] of Object.entries(request.headers ?? {}))
    lines.push(`wrk.headers[${luaBytes(Buffer.from(name))}] = ${luaBytes(Buffer.from(value))}`);
  if (request.body?.length) lines.push(`wrk.body = ${luaBytes(request.body)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Runs wrk against `url` for `seconds`: its request count, time and any failure it
 * reports, and the CPU the server (`serverPid`) and wrk used meanwhile.
 */
function runWrk(url, script, seconds, serverPid) {
  const argv = pinned(CLIENT_CPU, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, url]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    const meter = cpuMeter({ server: serverPid }, { kernel: true });
    // wrk's CPU is read once it has exited (its /proc entry goes with it), from what this process's exited children used.
    const childrenBefore = exitedChildrenSeconds();
    const startedAt = performance.now();
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const cpu = meter();
      const childrenAfter = exitedChildrenSeconds();
      if (childrenBefore !== null && childrenAfter !== null) {
        cpu.load = round((childrenAfter - childrenBefore) / ((performance.now() - startedAt) / 1000), 3);
        if (cpu.others !== null) cpu.others = round(Math.max(0, cpu.others - cpu.load), 3);
      } else cpu.load = null;
      const done = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
      if (code !== 0 || !done) return reject(new Error(`wrk exited ${code}: ${out.trim()}`));
      const unit = { ms: 0.001, s: 1, m: 60 }[done[3]];
      const completed = Number(done[1]);
      const durationS = Number(done[2]) * unit;
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      const socketErrors = /Socket errors: (.*)/.exec(out)?.[1];
      resolve({ completed, durationS, rps: completed / durationS, non2xx, socketErrors, cpu });
    });
  });
}

function skippedRow(why) {
  return {
    id: 'one-key-wrk',
    title: '1w. One key, wrk: memory hit vs nginx proxy_cache and the socket limit',
    measured: null,
    unit: 'ratio',
    target: { op: '>=', value: 1 },
    pass: null,
    skipped: why,
    display: `skipped: ${why}`,
    raw: { skipped: why },
  };
}

export async function oneKey(ctx) {
  const { services, sim, mode, log, version, routeIds } = ctx;
  const wrk = wrkVersion();
  if (wrk === null) return skippedRow('wrk is not installed (Debian package wrk)');
  const anchor = anchorAvailable();
  if (anchor.skipped) return skippedRow(anchor.skipped);
  const routes = HIT_ROUTES.filter((r) => ROUTES.includes(r.id) && (!routeIds || routeIds.includes(r.id)));
  if (routes.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'ledger-proxy-wrk-'));
  const seconds = Math.max(1, Math.round(mode.measureS));
  const rows = [];
  try {
    for (const route of routes) {
      const items = routeItems(route, 1, version);
      const request = route.request(items[0], version);
      const proxy = await services.proxy(sim.info.url, {}, { name: `proxy-one-key-${route.id}` });
      const proxyT = { name: `proxy ${route.id}`, url: proxy.info.url, pid: proxy.info.pid };
      await prime(ctx.load, { ...proxyT, route: route.id, items, version: String(version) }, 'HIT/memory');
      const hit = await call(proxy.info.url, request);
      const nginx = await startAnchor(ctx, { anchor, route, items, version, prime });
      const limit = await services.socketLimit(cannedReply(hit));
      const limitAgain = await call(limit.info.url, request);
      if (limitAgain.status !== hit.status || !limitAgain.body.equals(hit.body))
        throw new Error(`${route.id}: the socket limit's reply differs from the proxy's hit`);
      const servers = [
        proxyT,
        { name: `nginx ${route.id}`, url: nginx.target.url, pid: nginx.target.pid },
        { name: `socket limit ${route.id}`, url: limit.info.url, pid: limit.info.pid },
      ];
      const script = join(dir, `${route.id}.lua`);
      writeFileSync(script, wrkScript(request));
      for (const s of servers) await runWrk(s.url, script, 1, s.pid);

      const runs = {};
      for (let r = 0; r < mode.rounds; r++) {
        for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
          await ctx.quiet(`one key ${s.name} round ${r + 1}`);
          const nodeBefore = upstreamReads(await sim.call('counters'));
          const res = await runWrk(s.url, script, seconds, s.pid);
          const nodeCalls = upstreamReads(await sim.call('counters')) - nodeBefore;
          if (res.non2xx > 0 || nodeCalls > 0)
            throw new Error(`${s.name}: ${res.non2xx} replies not 2xx, ${nodeCalls} reads reached the node`);
          (runs[s.name] ??= []).push({ round: r + 1, ...res, rps: round(res.rps, 1) });
          const cpu = ['server', 'load', 'others'].map((k) => `${k} ${res.cpu[k] ?? '?'}`);
          cpu.push(`server in the kernel ${res.cpu.kernel.server ?? '?'}`);
          log(
            `  round ${r + 1} ${s.name.padEnd(22)} ${String(Math.round(res.rps)).padStart(6)} req/s (CPU: ${cpu.join(', ')})`,
          );
        }
      }
      for (const handle of [proxy, nginx.handle, limit]) await services.stop(handle);

      const [p, n, l] = servers.map((s) => s.name);
      const vsNginx = compare(runs, p, n);
      const vsLimit = compare(runs, p, l);
      const micros = { ...vsNginx.serverCpuMicrosPerRequest, ...vsLimit.serverCpuMicrosPerRequest };
      // The kernel's part: a socket's reads and writes cost every server alike, so what one server costs beyond another is in the rest.
      const kernel = Object.fromEntries(
        servers.map((s) => [s.name, cpuMicrosPerRequest(runs[s.name], (x) => x.cpu.kernel.server)]),
      );
      const inKernel = (a, b) => `${kernel[a] ?? '?'} vs ${kernel[b] ?? '?'} of them in the kernel`;
      const common = { wrk, connections: CONNECTIONS, seconds, rounds: mode.rounds, pinned: CAN_PIN };
      const nginxRatio = vsNginx.perServerCpuSecondRatio;
      const limitRatio = vsLimit.perServerCpuSecondRatio;
      rows.push(
        {
          id: `one-key-vs-nginx-${route.id}`,
          title: `1w. One key (wrk), memory hit vs nginx proxy_cache, per server CPU-second: ${route.title}`,
          measured: nginxRatio,
          unit: 'ratio',
          target: { op: '>=', value: route.anchor },
          pass: meets(nginxRatio, { op: '>=', value: route.anchor }),
          display: `${nginxRatio ?? '?'} (${micros[p] ?? '?'} vs ${micros[n] ?? '?'} CPU µs per reply, ${inKernel(p, n)}; ${Math.round(vsNginx.rps[p])} vs ${Math.round(vsNginx.rps[n])} req/s)`,
          raw: { ...common, route: route.id, nginx: anchor.version, ...vsNginx, kernelMicrosPerReply: kernel, runs },
        },
        {
          id: `one-key-vs-socket-limit-${route.id}`,
          title: `1w. One key (wrk), memory hit vs the socket limit, per server CPU-second: ${route.title}`,
          measured: limitRatio,
          unit: 'ratio',
          target: { op: '>=', value: SOCKET_LIMIT_TARGET },
          pass: meets(limitRatio, { op: '>=', value: SOCKET_LIMIT_TARGET }),
          display: `${limitRatio ?? '?'} (${micros[p] ?? '?'} vs ${micros[l] ?? '?'} CPU µs per reply, ${inKernel(p, l)}; ${Math.round(vsLimit.rps[p])} vs ${Math.round(vsLimit.rps[l])} req/s)`,
          raw: { ...common, route: route.id, ...vsLimit, kernelMicrosPerReply: kernel },
        },
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
