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
    enabled: z.boolean().default(true),
    // '*': any origin; otherwise only these exact origins get the CORS headers.
    origins: z.union([z.literal('*'), z.array(origin).min(1)]).default('*'),
    // How long a browser may keep a preflight's answer.
    maxAgeSeconds: nonNegativeInt.default(86400),
  })
  .prefault({});
