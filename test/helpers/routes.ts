// A request parsed by the route table as the public entry parses it, for the
// tests of route descriptors (test/unit/routes.test.ts, state-reads.test.ts).
import type { ReadRequest } from '../../src/model/read.js';
import type { RawRead } from '../../src/routes/route.js';
import { readRoutes, routeMatcher } from '../../src/routes/table.js';
import { vendorNames } from '../../src/wire/vendor.js';

export const ROUTES = readRoutes(vendorNames('node'));
export const { match, mayMatch } = routeMatcher(ROUTES);

/** Parses a request line (and body) as the public entry does; a body that is no string is sent as its JSON. */
export function parseRequest(
  method: 'GET' | 'POST',
  url: string,
  init: { accept?: string; body?: unknown; contentType?: string } = {},
): ReadRequest {
  const m = match(method, url);
  if (m === undefined || m === 'undecodable') throw new Error(`no route for ${method} ${url}`);
  const raw: RawRead = {
    params: m.params,
    query: m.query,
    accept: init.accept,
    contentType: init.contentType ?? (init.body === undefined ? undefined : 'application/json'),
    body:
      init.body === undefined
        ? Buffer.alloc(0)
        : Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body)),
  };
  return m.route.parse(raw);
}
