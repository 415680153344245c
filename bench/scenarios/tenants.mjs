// Scenario 8: three tenants on one proxy in front of a slow node with a budget
// (upstreams[].maxInFlight), offered far more node work than it can take: a
// wallet backend's key (high), a dapp's key (normal) and anonymous traffic (low),
// each running the wallet workload (lib/workloads.mjs) at once. What it shows:
// each tenant's node units stay within its nodeUnitsPerMinute (and what it had in
// flight when they ran out, which is charged as it is answered), the high tenant is
// answered (success ratio), and the low tenant is the one shed.
import { createHash } from 'node:crypto';
import { DEFAULT_COSTS } from '../../dist/config/index.js';
import { meets } from '../lib/report.mjs';
import { round } from '../lib/procstat.mjs';
import { rawItem } from '../lib/requests.mjs';

const HIGH_SUCCESS_TARGET = { op: '>=', value: 0.99 };
/** A node call takes this long (the sim's slow fault), so maxInFlight bounds node calls per second. */
const NODE_DELAY_MS = 20;
const NODE_MAX_IN_FLIGHT = 20;
const ITEMS = 100_000;
/** The dearest read of the wallet workload (raw_item and view), in node units, as the proxy's config charges it. */
const DEAREST_READ_UNITS = Math.max(DEFAULT_COSTS.raw_item, DEFAULT_COSTS.view);

const sha256 = (key) => createHash('sha256').update(key).digest('hex');

/** The tenants, their keys and budgets in node units a minute (the dapp's is below what it would spend unlimited). */
const TENANTS = [
  { name: 'wallet-backend', key: 'bench-wallet-key', priority: 'high', nodeUnitsPerMinute: 600_000, connections: 8 },
  { name: 'dapp-web', key: 'bench-dapp-key', priority: 'normal', nodeUnitsPerMinute: 3_000, connections: 24 },
  { name: 'anonymous', key: null, priority: 'low', nodeUnitsPerMinute: 20_000, connections: 32 },
];

function tenantsConfig() {
  const anonymous = TENANTS.find((t) => t.key === null);
  return {
    anonymous: { priority: anonymous.priority, nodeUnitsPerMinute: anonymous.nodeUnitsPerMinute },
    list: TENANTS.filter((t) => t.key !== null).map((t) => ({
      name: t.name,
      keys: [{ sha256: sha256(t.key) }],
      priority: t.priority,
      nodeUnitsPerMinute: t.nodeUnitsPerMinute,
    })),
  };
}

/** The value of a metric's line with exactly these labels in the proxy's /metrics text. */
function metric(text, name, labels) {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

export async function tenantShedding(ctx) {
  const { services, load, sim, mode, log, version } = ctx;
  await sim.call('fault', { mode: 'slow', delayMs: NODE_DELAY_MS, routes: ['raw_item', 'view'] });
  const proxy = await services.proxy(
    null,
    {
      upstreams: [{ url: sim.info.url, name: 'node0', maxInFlight: NODE_MAX_IN_FLIGHT }],
      tenants: tenantsConfig(),
    },
    { name: 'proxy-tenants' },
  );
  const sample = rawItem('0x00', version);
  const spec = (tenant, duration, seed) => ({
    url: proxy.info.url,
    path: sample.path,
    headers: { ...sample.headers, ...(tenant.key === null ? {} : { authorization: `Bearer ${tenant.key}` }) },
    body: sample.body.toString('utf8'),
    connections: tenant.connections,
    duration,
    workload: { kind: 'wallet', items: ITEMS, s: 1.0, pinnedShare: 0.8, version: String(version), seed },
  });
  log(`  warm-up ${mode.walletWarmS}s, three tenants at once`);
  await Promise.all(TENANTS.map((t, i) => load.call('run', spec(t, mode.walletWarmS, 10 + i))));
  await ctx.quiet('tenants');
  const before = await proxy.call('metrics');
  const startedAt = Date.now();
  const runs = await Promise.all(TENANTS.map((t, i) => load.call('run', spec(t, mode.walletMeasureS, 20 + i))));
  const endedAt = Date.now();
  const after = await proxy.call('metrics');
  // The limits count in clock minutes: the run may have spent the units of each minute it touched.
  const windows = Math.floor(endedAt / 60_000) - Math.floor(startedAt / 60_000) + 1;
  await services.stop(proxy);
  await sim.call('clearFaults');

  const per = TENANTS.map((t, i) => {
    const r = runs[i];
    const delta = (name, labels) => metric(after, name, labels) - metric(before, name, labels);
    const units = delta('ledger_proxy_tenant_node_units_total', `tenant="${t.name}"`);
    const answered = Object.values(r.statusCodes).reduce((a, b) => a + b, 0);
    // Served: any answer but a refusal (a node's 404 for an absent item is an answer).
    const refused = (r.statusCodes['503'] ?? 0) + (r.statusCodes['429'] ?? 0);
    return {
      tenant: t.name,
      priority: t.priority,
      connections: t.connections,
      answered,
      successRatio: round(answered ? (answered - refused) / answered : 0, 4),
      statusCodes: r.statusCodes,
      shed: delta('ledger_proxy_tenant_requests_total', `tenant="${t.name}",outcome="shed"`),
      rateLimited: delta('ledger_proxy_tenant_requests_total', `tenant="${t.name}",outcome="rate_limited"`),
      nodeUnits: units,
      nodeUnitsBudget: t.nodeUnitsPerMinute * windows,
    };
  });
  for (const p of per)
    log(
      `  ${p.tenant} (${p.priority}): success ${p.successRatio}, shed ${p.shed}, rate limited ${p.rateLimited}, node units ${p.nodeUnits} of at most ${p.nodeUnitsBudget} (and ${p.connections * DEAREST_READ_UNITS} in flight), ${JSON.stringify(p.statusCodes)}`,
    );
  const high = per.find((p) => p.priority === 'high');
  const low = per.find((p) => p.priority === 'low');
  // A request is refused once the units are spent, and charged once answered: what each connection
  // had in flight when they ran out (one request each) may still be charged.
  const withinBudgets = per.every((p) => p.nodeUnits <= p.nodeUnitsBudget + p.connections * DEAREST_READ_UNITS);
  const lowShedMore = low.shed + low.rateLimited > high.shed + high.rateLimited;
  return {
    id: 'tenants-high-success',
    title: '8. Three tenants, a slow node with a budget, overload: the high tenant answered while low is shed',
    measured: high.successRatio,
    unit: 'ratio',
    target: HIGH_SUCCESS_TARGET,
    pass: meets(high.successRatio, HIGH_SUCCESS_TARGET) && withinBudgets && lowShedMore,
    display: `${high.successRatio} for high (${high.answered} answered); low shed ${low.shed + low.rateLimited} of ${low.answered}; node units within each budget: ${withinBudgets ? 'yes' : 'NO'}`,
    raw: {
      nodeDelayMs: NODE_DELAY_MS,
      nodeMaxInFlight: NODE_MAX_IN_FLIGHT,
      seconds: round((endedAt - startedAt) / 1000, 2),
      minuteWindows: windows,
      tenants: per,
    },
  };
}
