// Monitoring you can run: the Prometheus config and alert rules under deploy/
// pass promtool (config, rules, the rules' own unit tests, one that fires each
// alert), the live /metrics passes `promtool check metrics`, every metric the
// alerts and the Grafana dashboard query is one the proxy exports, Alertmanager's
// config passes amtool and routes by severity, and the dashboard takes its data
// source and instance from variables. promtool and amtool come from Debian's
// `prometheus` and `prometheus-alertmanager` packages (.ci/run installs them).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { promtool, requirePromtool, requireTool, runTool } from '../helpers/monitoring-tools.js';
import { freePort } from '../helpers/free-port.js';
import { declaredMetrics } from '../helpers/prometheus.js';
import { call, proxy, rawItem, sim, viewJson } from '../helpers/proxy.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PROMETHEUS = join(ROOT, 'deploy', 'prometheus');
const ALERTMANAGER = join(ROOT, 'deploy', 'alertmanager');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'dashboards', 'ledger-proxy.json');

await requirePromtool();

await requireTool('amtool', 'prometheus-alertmanager');

const promtoolIn = (args: string[], stdin?: string) => promtool(args, { cwd: PROMETHEUS, stdin });
const amtool = (args: string[]) => runTool('amtool', args, { cwd: ALERTMANAGER });

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

/** Exported by the primary of server.workers > 1 only (test/faults/worker-death.test.ts reads them). */
const CLUSTER_ONLY = ['ledger_proxy_workers', 'ledger_proxy_workers_scraped'];

interface Dashboard {
  templating: { list: Array<{ name: string; type: string; [key: string]: unknown }> };
  panels: Array<{ title: string; datasource: unknown; targets: Array<{ expr: string; datasource: unknown }> }>;
}

/** Grafana's reference to the dashboard's data source variable (a Grafana placeholder, not a JS template). */
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('');
const DATASOURCE = { type: 'prometheus', uid: DATASOURCE_VARIABLE };

function dashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
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
      'ledger_proxy_redis_errors_total{client="cache",op="connection"} 0',
      'ledger_proxy_redis_errors_total{client="cache",op="get"} 0',
      'ledger_proxy_redis_errors_total{client="cache",op="set"} 0',
      'ledger_proxy_redis_errors_total{client="limits",op="connection"} 0',
      'ledger_proxy_redis_corrupt_total{fault="checksum"} 0',
      'ledger_proxy_errors_total{reason="rate_limited"} 0',
      'ledger_proxy_tenant_requests_total{tenant="anonymous",outcome="rate_limited"} 0',
      'ledger_proxy_upstream_misbehaving_total{upstream="node0",reason="ahead"} 0',
      'ledger_proxy_latest_step_backs_total 0',
      'ledger_proxy_verify_total{outcome="disagreed"} 0',
      'ledger_proxy_upstream_requests_total{upstream="node0",outcome="failed"} 0',
      'ledger_proxy_upstream_requests_total{upstream="node0",outcome="node_error"} 0',
    ]) {
      expect(text.split('\n'), series).toContain(series);
    }
  });

  it('every metric the alerts and the dashboard query is one the proxy exports', async () => {
    const text = await liveMetrics();
    const exported = declaredMetrics(text);
    const alerts = readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8');
    const queried = [
      ...metricNames(alerts),
      ...dashboard().panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr))),
    ];
    expect(queried.length).toBeGreaterThan(10);
    for (const name of new Set(queried)) {
      if (CLUSTER_ONLY.includes(name)) continue;
      expect(exported, `${name} is queried but not exported`).toContain(name);
    }
  });

  it('every alert has a rule test that fires it', () => {
    const rules = parse(readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8')) as {
      groups: Array<{ rules: Array<{ alert: string }> }>;
    };
    const tests = parse(readFileSync(join(PROMETHEUS, 'alerts.test.yml'), 'utf8')) as {
      tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
    };
    const fired = new Set(
      tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    const quiet = new Set(
      tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length === 0).map((a) => a.alertname)),
    );
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual(
      expect.arrayContaining([
        'LedgerProxyDown',
        'LedgerProxyAbsent',
        'LedgerProxyHigh5xxRatio',
        'LedgerProxyRedisErrors',
        'LedgerProxyTenantRateLimited',
      ]),
    );
    for (const alert of alerts) {
      expect(fired.has(alert), `${alert} is fired by a test`).toBe(true);
      expect(quiet.has(alert), `${alert} stays quiet in a test`).toBe(true);
    }
  });
});

describe('runbooks', () => {
  const TROUBLESHOOTING = 'docs/operations/troubleshooting.md';

  it("every alert's runbook_url is its section of the troubleshooting page, relative to the repository", () => {
    const rules = parse(readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8')) as {
      groups: Array<{ rules: Array<{ alert: string; annotations: Record<string, string> }> }>;
    };
    for (const rule of rules.groups.flatMap((g) => g.rules))
      expect(rule.annotations.runbook_url, rule.alert).toBe(`${TROUBLESHOOTING}#${rule.alert.toLowerCase()}`);
  });

  it("Alertmanager's template joins it to the one base URL it states: the project's repository, as package.json names it", async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'runbook-')), 'data.json');
    const runbook = `${TROUBLESHOOTING}#ledgerproxydown`;
    writeFileSync(data, JSON.stringify({ commonAnnotations: { runbook_url: runbook } }));
    const rendered = await amtool([
      'template',
      'render',
      '--template.glob=templates/*.tmpl',
      `--template.data=${data}`,
      '--template.text={{ template "ledger_proxy.runbook" . }}',
    ]);
    expect(rendered.code, rendered.out).toBe(0);
    const { repository } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      repository: { url: string };
    };
    // git+https://host/owner/name.git, as npm records it: the repository's web address.
    const home = repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(home).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+$/);
    expect(rendered.stdout.trim()).toBe(`${home}/blob/main/${runbook}`);
  });
});

describe('monitoring (Alertmanager)', () => {
  it('the config is valid and routes critical and warning alerts to their receivers', async () => {
    const check = await amtool(['check-config', 'alertmanager.yml']);
    expect(check.code, check.out).toBe(0);
    for (const [labels, receiver] of [
      [['severity=critical', 'alertname=LedgerProxyDown'], 'critical'],
      [['severity=warning', 'alertname=LedgerProxyRedisErrors'], 'warning'],
      [['alertname=Unlabelled'], 'warning'],
    ] as const) {
      const routed = await amtool(['config', 'routes', 'test', '--config.file=alertmanager.yml', ...labels]);
      expect(routed.stdout.trim(), `${labels.join(' ')}: ${routed.out}`).toBe(receiver);
    }
  });
});

describe('the Grafana dashboard', () => {
  it('has a data source variable and an instance variable, and every query uses both', () => {
    const board = dashboard();
    const variables = board.templating.list;
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(variables.find((v) => v.name === 'instance')).toMatchObject({
      type: 'query',
      includeAll: true,
      multi: true,
      datasource: { uid: DATASOURCE_VARIABLE },
    });
    for (const panel of board.panels) {
      expect(panel.datasource, panel.title).toEqual(DATASOURCE);
      for (const target of panel.targets) {
        expect(target.datasource, panel.title).toEqual(DATASOURCE);
        const selectors = [...target.expr.matchAll(/\bledger_proxy_[a-z0-9_]+(\{[^}]*\})?/g)];
        expect(selectors.length, target.expr).toBeGreaterThan(0);
        for (const [selector, labels] of selectors)
          expect(labels ?? '', `${panel.title}: ${selector}`).toContain('instance=~"$instance"');
      }
    }
    // No data source uid is written into the dashboard anywhere.
    expect(JSON.stringify(board)).not.toMatch(/"datasource":\{[^}]*"uid":"(?!\$\{datasource\})/);
  });
});
