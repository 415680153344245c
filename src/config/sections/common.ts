// Value types every config section shares.
import { z } from 'zod';

export const port = z.int().min(0).max(65535);
export const positiveInt = z.int().positive();
export const nonNegativeInt = z.int().nonnegative();
export const host = z.string().min(1);
export const chainId = z.int().min(0).max(255);

export const MIB = 1024 * 1024;
