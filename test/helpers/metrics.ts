// Reading a proxy's own metrics in a test: the value of one counter or gauge for
// the labels given (the sum over the label values not given), from its registry.
import type { App } from '../../src/app.js';

export async function metricValue(app: App, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = app.metrics.registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}
