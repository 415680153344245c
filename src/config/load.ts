// YAML file + env → validated, frozen Config. The only entry points to config.

import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { applyEnv } from './env.js';
import { ConfigError, issuesFromZod, type ConfigIssue } from './errors.js';
import { ConfigSchema, type Config } from './schema.js';
import { keyIssues } from './keys.js';

export interface LoadOptions {
  /** YAML file; absent = all defaults (plus env) */
  file?: string;
  /** defaults to process.env: the proxy's own environment is where operators set overrides */
  env?: NodeJS.ProcessEnv;
}

/**
 * A key left empty in YAML (`redis:` with everything under it commented out) reads
 * as null; treat it as absent so it means "the default", not a type error.
 */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (child !== null) out[key] = dropNulls(child);
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function validate(raw: unknown, env: NodeJS.ProcessEnv, source?: string): Config {
  const applied = applyEnv(dropNulls(raw ?? {}), env);
  // Name the env variable when a value it set fails validation; the file is innocent.
  const origin = (path: string): string | undefined => {
    for (const [prefix, name] of applied.origins) {
      if (path === prefix || path.startsWith(`${prefix}.`)) return name;
    }
    return undefined;
  };
  const result = ConfigSchema.safeParse(applied.raw, { reportInput: true });
  // The keys from env are read here too, so whatever a start would refuse, a load refuses.
  const keys = result.success ? keyIssues(result.data, env) : [];
  const issues: ConfigIssue[] = [...applied.problems, ...(result.success ? keys : issuesFromZod(result.error, origin))];
  if (issues.length > 0 || !result.success) throw new ConfigError(issues, source);
  return deepFreeze(result.data);
}

/** Validates an already-parsed config object. No env unless given, so tests stay hermetic. */
export function parseConfig(raw: unknown, env: NodeJS.ProcessEnv = {}): Config {
  return validate(raw, env);
}

function readYaml(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([{ path: file, reason: `cannot read: ${(err as Error).message}` }]);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((error) => {
        const pos = error.linePos?.[0];
        const where = pos === undefined ? file : `${file}:${pos.line}:${pos.col}`;
        // The first line is yaml's reason; the rest is a code excerpt we replace with file:line:col.
        const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.code;
        return { path: where, reason };
      }),
    );
  }
  return doc.toJS();
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  if (options.file === undefined) return validate({}, env);
  return validate(readYaml(options.file), env, options.file);
}
