// Config problems are reported all at once, one `path.to.key: reason` line each,
// so an operator fixes a file in one pass instead of one error per restart.

import { z } from 'zod';
import { isSecretPath } from './redact.js';

export interface ConfigIssue {
  /** dotted path into the config (`upstreams.0.url`), or an env variable / file position */
  path: string;
  reason: string;
}

export class ConfigError extends Error {
  /** Stable code for callers (main.ts exits with a usage status on it). */
  readonly code = 'ERR_CONFIG_INVALID';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], source?: string) {
    const where = source === undefined ? '' : ` in ${source}`;
    super(`Invalid configuration${where}:\n${issues.map((i) => `  ${i.path}: ${i.reason}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

function dottedPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

function show(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/**
 * What was given, after a reason. Under a key that names secrets (a tenant's
 * keys, headers, tokens) the value is left out: a key pasted where its sha256
 * belongs must not reach a terminal or a CI log.
 */
function given(path: readonly PropertyKey[], value: unknown): string {
  return isSecretPath(path) ? ' (the value given is not shown: it may be a secret)' : `, got ${show(value)}`;
}

const TYPE_NAMES: Record<string, string> = { int: 'an integer', object: 'a mapping', array: 'a list' };

function bound(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const big = issue.code === 'too_big';
  const limit = big ? issue.maximum : issue.minimum;
  if (issue.origin === 'array') {
    return `must have ${big ? 'at most' : 'at least'} ${String(limit)} ${Number(limit) === 1 ? 'entry' : 'entries'}`;
  }
  if (issue.origin === 'string') {
    return limit === 1 && !big
      ? 'must not be empty'
      : `length must be ${big ? 'at most' : 'at least'} ${String(limit)}`;
  }
  const op = big ? (issue.inclusive ? 'at most' : 'less than') : issue.inclusive ? 'at least' : 'greater than';
  return `must be ${op} ${String(limit)}`;
}

/** Whether an issue's message is zod's own for its code, not one the schema gave. */
function isZodDefault(issue: z.core.$ZodIssue): boolean {
  const fallback = z.locales.en().localeError(issue as unknown as z.core.$ZodRawIssue);
  return issue.message === (typeof fallback === 'string' ? fallback : fallback?.message);
}

/** Keys a release retired, with what replaces them: named instead of "unknown key". */
const RETIRED: Readonly<Record<string, string>> = {
  rateLimit:
    'replaced by tenants: tenants.anonymous.requestsPerSecond limits each client address (and tenants.anonymous.nodeUnitsPerMinute the node work it causes), counted across instances through cache.redis when it is set',
};

/**
 * Zod's issues as config lines; unknown keys get one line each, at their own path.
 * `origin` names where a path's value came from (an env variable) when not the file.
 */
export function issuesFromZod(
  error: z.ZodError,
  origin: (path: string) => string | undefined = () => undefined,
): ConfigIssue[] {
  return error.issues.flatMap((issue): ConfigIssue[] => {
    const at = (path: readonly PropertyKey[], reason: string): ConfigIssue => {
      const dotted = dottedPath(path);
      const from = origin(dotted);
      return { path: dotted, reason: from === undefined ? reason : `${reason} (from ${from})` };
    };
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map((key) =>
          at([...issue.path, key], RETIRED[dottedPath([...issue.path, key])] ?? 'unknown key'),
        );
      case 'invalid_type': {
        if (issue.input === undefined) return [at(issue.path, 'required')];
        const expected = TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`;
        return [at(issue.path, `must be ${expected}${given(issue.path, issue.input)}`)];
      }
      case 'too_big':
      case 'too_small':
        return [at(issue.path, bound(issue))];
      case 'invalid_value':
        return [
          at(issue.path, `must be one of ${issue.values.map(String).join(' | ')}${given(issue.path, issue.input)}`),
        ];
      case 'invalid_format': {
        if (issue.pattern === undefined) return [at(issue.path, issue.message)];
        // The schema's own words (`.regex(PATTERN, 'must be …')`) say what is wanted; zod's default only quotes the pattern.
        const wanted = isZodDefault(issue) ? `must match ${issue.pattern}` : issue.message;
        return [at(issue.path, `${wanted}${given(issue.path, issue.input)}`)];
      }
      default:
        return [at(issue.path, issue.message)];
    }
  });
}
