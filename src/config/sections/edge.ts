// The edge: how the proxy answers browsers (api.md §10.1).
import { z } from 'zod';
import { nonNegativeInt } from './common.js';

/** An origin as a browser sends it: scheme, host and an optional port, nothing else. */
const origin = z
  .string()
  .regex(
    /^https?:\/\/[^/?#\s]+$/,
    'must be an origin such as https://wallet.example (scheme, host, optional port; no path)',
  );

export const CorsSchema = z
  .strictObject({
    // A node answers every origin; so does the proxy unless told otherwise.
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Answer browsers as a node does: a reply to a request with an allowed `Origin` carries `Access-Control-Allow-Origin` (that origin), `-Allow-Credentials` and `-Expose-Headers` (the ledger headers, cursor, gas used, X-Cache, X-Cache-Tier, X-Request-Id, Retry-After, RateLimit-*); every reply, to a request with `Origin` or without, carries `Vary: Origin`; a preflight on a `/v1` path is answered 204 by the proxy, never by a node, and is not rate limited. `false`: no CORS headers, no `Vary: Origin`, and a preflight goes to the node like any OPTIONS.',
      ),
    origins: z
      .union([z.literal('*'), z.array(origin).min(1)])
      .default('*')
      .describe(
        '`*` (any origin), or a list of exact origins (`https://wallet.example`); a request from another origin gets its reply without the CORS headers, but with `Vary: Origin`.',
      ),
    maxAgeSeconds: nonNegativeInt.default(86400).describe("`Access-Control-Max-Age` of a preflight's answer."),
  })
  .prefault({})
  .describe('How the proxy answers browsers (CORS).');
