// prom-client's default process and Node.js metrics, under the proxy's prefix,
// with names that pass `promtool check metrics`: prom-client names three gauges
// with a `_total` suffix, which Prometheus keeps for counters. They are collected
// again as gauges named for what they count, beside the by-type gauges they add up.
import { collectDefaultMetrics, Gauge, type Metric, type Registry } from 'prom-client';

/** prom-client's name (after the prefix) → the name the proxy exports it under. */
const RENAMED: Readonly<Record<string, string>> = {
  nodejs_active_handles_total: 'nodejs_handles_active',
  nodejs_active_requests_total: 'nodejs_requests_active',
  nodejs_active_resources_total: 'nodejs_resources_active',
};

export function registerProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const [from, to] of Object.entries(RENAMED)) {
    const original = registry.getSingleMetric(prefix + from) as (Metric & { help?: string }) | undefined;
    if (original === undefined) continue;
    registry.removeSingleMetric(prefix + from);
    new Gauge({
      name: prefix + to,
      help: original.help ?? to,
      registers: [registry],
      async collect() {
        const { values } = await original.get();
        this.reset();
        for (const sample of values) this.set(sample.labels, sample.value);
      },
    });
  }
}
