// Environment overrides, applied to the raw (unvalidated) config so the schema
// checks env values exactly as it checks the file's. Containers set these instead
// of shipping a file per deployment.

import type { ConfigIssue } from './errors.js';

type Parsed = { ok: true; value: unknown } | { ok: false; reason: string };

interface Override {
  name: string;
  path: readonly string[];
  parse: (text: string) => Parsed;
  /** keys removed next to the override: they would contradict it */
  removes?: readonly string[];
}

const text = (value: string): Parsed => ({ ok: true, value });

// Strict: `8080` only. Number() would also take ` 8080`, `0x1f90` and `8e3`.
function wholeNumber(value: string): Parsed {
  if (/^[0-9]+$/.test(value)) return { ok: true, value: Number(value) };
  return { ok: false, reason: `must be a whole number, got ${JSON.stringify(value)}` };
}

function urlList(value: string): Parsed {
  const urls = value.split(',').map((url) => url.trim());
  if (urls.some((url) => url === '')) {
    return {
      ok: false,
      reason: `must be a comma-separated list of URLs without empty entries, got ${JSON.stringify(value)}`,
    };
  }
  return { ok: true, value: urls.map((url) => ({ url })) };
}

export const ENV_OVERRIDES: readonly Override[] = [
  { name: 'LEDGER_PROXY_HOST', path: ['server', 'host'], parse: text },
  { name: 'LEDGER_PROXY_PORT', path: ['server', 'port'], parse: wholeNumber },
  { name: 'LEDGER_PROXY_ADMIN_PORT', path: ['admin', 'port'], parse: wholeNumber },
  { name: 'LEDGER_PROXY_VENDOR', path: ['vendor'], parse: text },
  { name: 'LEDGER_PROXY_UPSTREAMS', path: ['upstreams'], parse: urlList },
  // A size with its unit (512MiB) or in bytes: the schema reads it as it reads the file's.
  { name: 'LEDGER_PROXY_MEMORY_MAX_BYTES', path: ['cache', 'memory', 'maxBytes'], parse: text },
  { name: 'LEDGER_PROXY_REDIS_URL', path: ['cache', 'redis', 'url'], parse: text, removes: ['cluster'] },
  { name: 'LEDGER_PROXY_LOG_LEVEL', path: ['log', 'level'], parse: text },
  { name: 'LEDGER_PROXY_LOG_FORMAT', path: ['log', 'format'], parse: text },
  { name: 'LEDGER_PROXY_OTLP_ENDPOINT', path: ['tracing', 'otlpEndpoint'], parse: text },
];

export interface EnvApplied {
  /** a copy of the raw config with the overrides in place; the input is not changed */
  raw: unknown;
  /** env variables whose value could not be parsed; their override is skipped */
  problems: ConfigIssue[];
  /** dotted config path → the env variable that set it, to name it in later errors */
  origins: Map<string, string>;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A copy of `root` with `value` at `path`, copying only the mappings on the way.
 * A non-mapping in the way is left alone: validation reports it at its own path.
 */
function setIn(
  root: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
  removes: readonly string[],
): Record<string, unknown> {
  const [key, ...rest] = path;
  if (key === undefined) return root;
  const copy = { ...root };
  if (rest.length === 0) {
    copy[key] = value;
    for (const removed of removes) delete copy[removed];
    return copy;
  }
  const child = copy[key] ?? {};
  if (isMapping(child)) copy[key] = setIn(child, rest, value, removes);
  return copy;
}

/** An empty variable counts as unset, as compose files and shells often leave them. */
export function applyEnv(raw: unknown, env: NodeJS.ProcessEnv): EnvApplied {
  const problems: ConfigIssue[] = [];
  const origins = new Map<string, string>();
  if (!isMapping(raw)) return { raw, problems, origins };
  let result = raw;
  for (const override of ENV_OVERRIDES) {
    const value = env[override.name];
    if (value === undefined || value === '') continue;
    const parsed = override.parse(value);
    if (!parsed.ok) {
      problems.push({ path: override.name, reason: parsed.reason });
      continue;
    }
    result = setIn(result, override.path, parsed.value, override.removes ?? []);
    origins.set(override.path.join('.'), override.name);
  }
  return { raw: result, problems, origins };
}
