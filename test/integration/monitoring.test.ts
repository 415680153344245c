// Monitoring you can run (issue 15): the Prometheus config and alert rules under
// deploy/ pass promtool (config, rules, the rules' own unit tests), the live
// /metrics passes `promtool check metrics`, and every metric the alerts and the
// Grafana dashboard query is one the proxy exports. promtool comes from Debian's
// `prometheus` package (.ci/run installs it).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { promtool, requirePromtool } from '../helpers/promtool.js';
import { call, freePort, proxy, rawItem, sim, viewJson } from '../helpers/proxy.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PROMETHEUS = join(ROOT, 'deploy', 'prometheus');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'dashboards', 'ledger-proxy.json');

await requirePromtool();

const promtoolIn = (args: string[], stdin?: string) => promtool(args, { cwd: PROMETHEUS, stdin });

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
      const { code, out } = await promtoolIn(args);
      expect(code, `promtool ${args.join(' ')}:\n${out}`).toBe(0);
    }
  });

  it('the live /metrics passes promtool check metrics, with the process and Node.js metrics', async () => {
    const text = await liveMetrics();
    expect(text).toContain('ledger_proxy_process_cpu_seconds_total');
    expect(text).toContain('ledger_proxy_nodejs_handles_active');
    const { code, out } = await promtoolIn(['check', 'metrics'], text);
    expect(out.trim(), 'promtool check metrics').toBe('');
    expect(code).toBe(0);
  });

  it('counters of known labels read 0 before their first event', async () => {
    const node = await sim();
    const { app } = await proxy([node], { admin: { host: '127.0.0.1', port: await freePort() } });
    const text = (await call(app.adminUrl()!, '/metrics')).body.toString('utf8');
    for (const series of [
      'ledger_proxy_shed_total{reason="overload"} 0',
      'ledger_proxy_shed_total{reason="budget"} 0',
      'ledger_proxy_stale_total{reason="bound"} 0',
      'ledger_proxy_stale_total{reason="error"} 0',
      'ledger_proxy_redis_errors_total{op="connection"} 0',
      'ledger_proxy_redis_errors_total{op="get"} 0',
      'ledger_proxy_redis_errors_total{op="set"} 0',
      'ledger_proxy_latest_step_backs_total 0',
      'ledger_proxy_upstream_requests_total{upstream="node0",outcome="failed"} 0',
      'ledger_proxy_upstream_requests_total{upstream="node0",outcome="node_error"} 0',
    ]) {
      expect(text.split('\n'), series).toContain(series);
    }
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
