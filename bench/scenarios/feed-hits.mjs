// Scenario 4e: what following the change feed costs a hit. Two proxies in front of the
// sim of scenario 4c, whose ledger moves on and writes as it goes: latest.changeFeed on
// and off, each primed with the same pinned raw_item keys, then memory hits in
// alternating rounds (scenario 1's load). The feed's pages are decoded and verified on
// the proxy's own thread, so its cost shows as hits per server CPU-second, on ÷ off;
// a profile of one more round measures the feed's own share of the proxy's busy time.
import { fileURLToPath } from 'node:url';
import { busyShareUnder } from '../lib/cpuprofile.mjs';
import { round } from '../lib/procstat.mjs';
import { meets } from '../lib/report.mjs';
import { HIT_ROUTES, routeItems } from '../lib/routes.mjs';
import { compare, hitRound, interleaved, prime } from './hit-throughput.mjs';

/** Hits with the feed followed within 5% of the same hits without it. */
const HIT_COST_TARGET = { op: '>=', value: 0.95 };

export async function feedHitCost(ctx) {
  const { services, load, sim, mode, log, version } = ctx;
  const route = HIT_ROUTES[0];
  const items = routeItems(route, mode.hitKeys, version);
  const targets = [];
  for (const enabled of [true, false]) {
    const name = `feed ${enabled ? 'on' : 'off'} ${route.id}`;
    const proxy = await services.proxy(
      sim.info.url,
      { routing: { probeIntervalMs: 250 }, latest: { changeFeed: { enabled } } },
      { name: `proxy-feed-hits-${enabled ? 'on' : 'off'}` },
    );
    const target = { name, route: route.id, items, version: String(version), url: proxy.info.url, pid: proxy.info.pid };
    await prime(load, target, 'HIT/memory');
    targets.push({ target, proxy });
  }
  const [on, off] = targets.map((t) => t.target);
  log(`  feed on and off: ${items.length} ${route.id} keys primed on each`);
  for (const t of [on, off]) await load.call('blast', { ...hitRound(mode)(t), durationS: mode.warmS });
  const runs = await interleaved(ctx, [[on, off]], hitRound(mode), (t) => ({ server: t.pid }));
  const feedShare = await feedShareOfBusy(ctx, targets[0].proxy, on);
  for (const { proxy } of targets) await services.stop(proxy);
  const cmp = compare(runs, on.name, off.name);
  const ratio = cmp.perServerCpuSecondRatio ?? cmp.ratio;
  return {
    id: 'feed-hit-cost',
    title: '4e. Memory hits with latest.changeFeed on ÷ off, per server CPU-second (the ledger moving and writing)',
    measured: round(ratio, 3),
    unit: '× feed off',
    target: HIT_COST_TARGET,
    pass: meets(ratio, HIT_COST_TARGET),
    display: `${round(ratio, 3)} (${cmp.serverCpuMicrosPerRequest[on.name]} vs ${cmp.serverCpuMicrosPerRequest[off.name]} CPU µs per hit; req/s ratio ${round(cmp.ratio, 3)}, ${cmp.headlineFrom}; the feed's own work, profiled under the same hits: ${round(feedShare * 100, 2)}% of the proxy's busy time)`,
    raw: { route: route.id, keys: items.length, compare: cmp, runs, feedShareOfBusy: feedShare },
  };
}

/**
 * The feed's own work while the proxy serves hits, from a profile of one more round:
 * the share of busy time under the follower, the page reader and the write index. A
 * direct measure beside the ratio, which moves with the machine from round to round.
 */
async function feedShareOfBusy(ctx, proxy, target) {
  const { load, mode, root } = ctx;
  const file = fileURLToPath(new URL('../results/feed-hits-on.cpuprofile', import.meta.url));
  await ctx.quiet('4e: profile');
  await proxy.call('profileStart');
  await load.call('blast', { ...hitRound(mode)(target), durationS: mode.profileS });
  await proxy.call('profileStop', { file });
  const isPart = (path) => /^dist\/(writes|freshness)\/|^dist\/upstream\/feed-follower\.js$/.test(path);
  return busyShareUnder(file, { root: root.replace(/\/$/, ''), isPart });
}
