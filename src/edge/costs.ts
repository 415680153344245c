// What a request a node answers costs its tenant, in node units (api.md §10.3):
// by the cached route's family, or for passthrough by its route, the longest
// configured "METHOD /v1/path" prefix that matches. tenants.costs overrides the
// defaults (config/sections/tenants.ts).
import { DEFAULT_COSTS } from '../config/index.js';
import type { Exchange } from './exchange.js';

export class NodeCosts {
  private readonly costs: Readonly<Record<string, number>>;
  /** the configured passthrough routes, longest first */
  private readonly routes: ReadonlyArray<readonly [method: string, path: string, units: number]>;

  constructor(overrides: Readonly<Record<string, number>> = {}) {
    this.costs = { ...DEFAULT_COSTS, ...overrides };
    this.routes = Object.entries(this.costs)
      .filter(([name]) => name.includes(' '))
      .map(([name, units]) => {
        const [method, path] = name.split(' ') as [string, string];
        return [method, path, units] as const;
      })
      .sort((a, b) => b[1].length - a[1].length);
  }

  /** The units of an exchange a node answered. */
  of(exchange: Exchange): number {
    if (exchange.endpoint !== 'passthrough') return this.costs[exchange.endpoint] ?? this.costs.passthrough!;
    const method = exchange.req.method ?? 'GET';
    const path = (exchange.req.url ?? '').split('?', 1)[0]!;
    for (const [m, prefix, units] of this.routes) {
      if (m === method && (path === prefix || path.startsWith(`${prefix}/`))) return units;
    }
    return this.costs.passthrough!;
  }
}
