// Monitoring you can run (issue 15): the Prometheus config and alert rules under
// deploy/ pass promtool (config, rules, the rules' own unit tests), the live
// /metrics passes `promtool check metrics`, and every metric the alerts and the
// Grafana dashboard query is one the proxy exports. promtool comes from Debian's
// `prometheus` package (.ci/run installs it).
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { call, freePort, proxy, rawItem, sim, viewJson } from '../helpers/proxy.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PROMETHEUS = join(ROOT, 'deploy', 'prometheus');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'dashboards', 'ledger-proxy.json');

async function hasPromtool(): Promise<boolean> {
  try {
    await promisify(execFile)('promtool', ['--version']);
    return true;
  } catch {
    return false;
  }
}

// Like redis-server, promtool is a test dependency: missing, the suite fails (never skips).
if (!(await hasPromtool())) throw new Error('promtool is not on PATH; install it (apt-get install -y prometheus), as .ci/run does');

async function promtool(args: string[], stdin?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn('promtool', args, { cwd: PROMETHEUS });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolvePromise({ code: code ?? -1, out }));
    child.stdin.end(stdin ?? '');
  });
}

/** A proxy that has served a little of everything, and its /metrics text. */
async function liveMetrics(): Promise<string> {
  const node = await sim();
  const { app, url } = await proxy([node], { admin: { host: '127.0.0.1', port: await freePort() } });
  await rawItem(url, '0x01', { version: 1000 });
  await rawItem(url, '0x01', { version: 1000 });
  await viewJson(url, '0x1::sim::add', ['1', '2']);
  await call(url, '/v1');
  const res = await call(app.adminUrl()!, '/metrics');
  expect(res.status).toBe(200);
  return res.body.toString('utf8');
}

/** Metric names a PromQL expression refers to (ledger_proxy_*), without histogram suffixes. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bledger_proxy_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
}

describe('monitoring (promtool)', () => {
  it('the Prometheus config and the alert rules are valid, and the rules pass their unit tests', async () => {
    for (const args of [
      ['check', 'config', 'prometheus.yml'],
      ['check', 'rules', 'alerts.yml'],
      ['test', 'rules', 'alerts.test.yml'],
    ]) {
      const { code, out } = await promtool(args);
      expect(code, `promtool ${args.join(' ')}:\n${out}`).toBe(0);
    }
  });

  it("the live /metrics passes promtool check metrics: the project's own metrics are clean", async () => {
    const text = await liveMetrics();
    const { out } = await promtool(['check', 'metrics'], text);
    // prom-client's default process metrics have lint findings of their own
    // (nodejs_active_handles_total is a gauge); ours must have none.
    const problems = out.split('\n').filter((line) => line.trim() !== '');
    const ours = problems.filter((line) => !/^ledger_proxy_(process|nodejs)_/.test(line));
    expect(ours, out).toEqual([]);
  });

  it('every metric the alerts and the dashboard query is one the proxy exports', async () => {
    const text = await liveMetrics();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    const alerts = readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8');
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    const queried = [...metricNames(alerts), ...dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr)))];
    expect(queried.length).toBeGreaterThan(10);
    for (const name of new Set(queried)) expect(exported, `${name} is queried but not exported`).toContain(name);
  });
});
