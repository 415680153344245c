// The table of cached routes: every read the proxy serves from its cache is one
// descriptor here; everything else under /v1 passes through to a node.
import type { VendorNames } from '../wire/vendor.js';
import { accountRoutes } from './accounts.js';
import { historyRoutes } from './history.js';
import { rawItemRoute, viewRoute } from './parse-read.js';
import type { RawRead, RouteDescriptor } from './route.js';
import { tableRoutes } from './tables.js';

export function readRoutes(vendor: VendorNames): readonly RouteDescriptor[] {
  return [rawItemRoute(), viewRoute(vendor), ...accountRoutes, ...tableRoutes, ...historyRoutes];
}

/** A request matched to its route, with the parts the parser needs. */
export interface RouteMatch {
  route: RouteDescriptor;
  params: RawRead['params'];
  query: RawRead['query'];
}

export interface RouteMatcher {
  /** the cached route of a request line, with its parameters; undefined for anything else; 'undecodable' for a cached route's path that is not valid percent-encoding */
  match(method: string, url: string): RouteMatch | 'undecodable' | undefined;
  /** whether a request line may be a cached route: one regex test, to decide whether to read a body */
  mayMatch(method: string, url: string): boolean;
}

/**
 * Matches a request line to a cached route without the framework (the fast
 * path): the same patterns as the fastify routes, one segment per parameter.
 */
export function routeMatcher(routes: readonly RouteDescriptor[]): RouteMatcher {
  const SEGMENT = '[^/?#]+';
  const compiled = routes.map((route) => {
    const names: string[] = [];
    const source = route.url.replace(/:([a-z_]+)/g, (_m, name: string) => {
      names.push(name);
      return `(${SEGMENT})`;
    });
    return { route, names, pattern: new RegExp(`^${source}$`) };
  });
  // Per method, every pattern in one alternation (no captures): one test per request.
  const any = new Map<string, RegExp>();
  for (const method of new Set(routes.map((r) => r.method))) {
    const sources = routes.filter((r) => r.method === method).map((r) => r.url.replace(/:([a-z_]+)/g, SEGMENT));
    any.set(method, new RegExp(`^(?:${sources.join('|')})(?:\\?|$)`));
  }
  const mayMatch = (method: string, url: string): boolean => any.get(method)?.test(url) ?? false;
  const match = (method: string, url: string): RouteMatch | 'undecodable' | undefined => {
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    for (const { route, names, pattern } of compiled) {
      if (route.method !== method) continue;
      const match = pattern.exec(path);
      if (match === null) continue;
      try {
        const params: RawRead['params'] = {};
        names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1])));
        return { route, params, query: queryRecord(queryAt < 0 ? '' : url.slice(queryAt + 1)) };
      } catch {
        return 'undecodable';
      }
    }
    return undefined;
  };
  return { match, mayMatch };
}

/** A query string as fastify parses it: one value per name, an array when it repeats. */
function queryRecord(search: string): RawRead['query'] {
  const query: RawRead['query'] = {};
  if (search === '') return query;
  for (const [name, value] of new URLSearchParams(search)) {
    const seen = query[name];
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
}
