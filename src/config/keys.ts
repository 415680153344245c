// Keys as the proxy knows them: the sha256 of each, written in the file or taken
// from the environment variable that holds the key (tenant keys, admin.token).
// The config's loader, the tenant directory and the admin listener all resolve
// them here, so a start, a SIGHUP reload and `--check` meet the same problems (a
// variable that is not set, one key listed twice) and report them the same way,
// by the key's path.
import { hash } from 'node:crypto';
import type { ConfigIssue } from './errors.js';
import type { Config } from './schema.js';

/** A key as the config gives it: its sha256, or the environment variable that holds it. */
export type ConfiguredKey = { readonly sha256: string } | { readonly env: string };

export interface TenantKeys {
  /** for each tenant of tenants.list, in its order: the sha256 (hex) of each of its keys */
  hashes: string[][];
  /** a variable not set, a key listed twice; never a key or its hash */
  issues: ConfigIssue[];
}

/** Node's one-shot digest: a tenant's key is hashed on each of its requests. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** The sha256 (hex) of the key at `path`, or the issue that keeps it unknown; `holds` says whose key it is. */
export function resolveKey(
  key: ConfiguredKey,
  env: NodeJS.ProcessEnv,
  path: string,
  holds: string,
): string | ConfigIssue {
  if ('sha256' in key) return key.sha256;
  const value = env[key.env];
  // An empty variable counts as not set.
  if (value === undefined || value === '')
    return { path: `${path}.env`, reason: `the environment variable ${key.env} is not set (it holds ${holds})` };
  return sha256Hex(value);
}

/** The keys of `tenants`, with the variables read from `env`. */
export function resolveTenantKeys(tenants: Config['tenants'], env: NodeJS.ProcessEnv): TenantKeys {
  const hashes: string[][] = [];
  const issues: ConfigIssue[] = [];
  /** hash → where it was first listed, to name it when it comes again */
  const listed = new Map<string, string>();
  (tenants?.list ?? []).forEach((tenant, t) => {
    const own: string[] = [];
    tenant.keys.forEach((key, k) => {
      const path = `tenants.list.${t}.keys.${k}`;
      const hash = resolveKey(key, env, path, `a key of tenant ${tenant.name}`);
      if (typeof hash !== 'string') return void issues.push(hash);
      const first = listed.get(hash);
      // A key names one tenant: listed twice, which of its tenants a client is would depend on the order.
      if (first !== undefined) issues.push({ path, reason: `the same key as ${first}: a key may be listed once` });
      else listed.set(hash, `${path} (tenant ${tenant.name})`);
      own.push(hash);
    });
    hashes.push(own);
  });
  return { hashes, issues };
}

/** Every key of the config that cannot be known (tenant keys, admin.token): what a start would refuse. */
export function keyIssues(config: Config, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues = resolveTenantKeys(config.tenants, env).issues;
  const token = config.admin.token;
  if (token !== undefined) {
    const hash = resolveKey(token, env, 'admin.token', 'the admin token');
    if (typeof hash !== 'string') issues.push(hash);
  }
  return issues;
}
