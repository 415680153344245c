// Value types every config section shares.
import { isIP } from 'node:net';
import { z } from 'zod';
import { formatSize, parseSize, SIZE_FORMS, SIZE_PATTERN } from '../sizes.js';

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export const port = z.int().min(0).max(65535);
export const positiveInt = z.int().positive();
export const nonNegativeInt = z.int().nonnegative();
export const host = z.string().min(1);
/** A host name or an IP address as a Host header names it: no scheme, no port; lower-cased. */
export const hostName = z
  .string()
  .refine(
    (value) => HOST_NAME.test(value) || isIP(value) !== 0,
    'must be a host name or an IP address, without a scheme or a port',
  )
  .transform((value) => value.toLowerCase());
export const chainId = z.int().min(0).max(255);

export const MIB = 1024 * 1024;

/**
 * A size in bytes: a whole number, or a string with a binary unit (256MiB), from 1
 * to `max`. The bounds are checked on the bytes, so a unit cannot slip past them;
 * they are repeated on the number for editors (the JSON Schema).
 */
export function byteSize(max: number = Number.MAX_SAFE_INTEGER) {
  return z
    .union([z.int().meta({ minimum: 1, maximum: max }), z.string().meta({ pattern: SIZE_PATTERN })], {
      error: (issue) => `must be ${SIZE_FORMS}, got ${JSON.stringify(issue.input)}`,
    })
    .transform((value, ctx) => {
      const parsed = typeof value === 'number' ? { ok: true as const, bytes: value } : parseSize(value);
      const reason = !parsed.ok
        ? parsed.reason
        : parsed.bytes < 1
          ? 'must be greater than 0'
          : parsed.bytes > max
            ? `must be at most ${formatSize(max)}${max % 1024 === 0 ? ` (${max} bytes)` : ''}`
            : undefined;
      if (reason === undefined && parsed.ok) return parsed.bytes;
      ctx.addIssue({ code: 'custom', message: reason ?? '', input: value });
      return z.NEVER;
    });
}
