// Value types every config section shares.
import { isIP } from 'node:net';
import { z } from 'zod';

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
