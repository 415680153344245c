// Tenant keys as the proxy knows them: the sha256 of each, written in the file or
// taken from the environment variable that holds the key. The config's loader
// and the tenant directory both resolve them here, so a start, a SIGHUP reload
// and `--check` meet the same problems (a variable that is not set, one key
// listed twice) and report them the same way, by the key's path.
import { createHash } from 'node:crypto';
import type { ConfigIssue } from './errors.js';
import type { Config } from './schema.js';

export interface TenantKeys {
  /** for each tenant of tenants.list, in its order: the sha256 (hex) of each of its keys */
  hashes: string[][];
  /** a variable not set, a key listed twice; never a key or its hash */
  issues: ConfigIssue[];
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The keys of `tenants`, with the variables read from `env` (an empty one counts as not set). */
export function resolveTenantKeys(tenants: Config['tenants'], env: NodeJS.ProcessEnv): TenantKeys {
  const hashes: string[][] = [];
  const issues: ConfigIssue[] = [];
  /** hash → where it was first listed, to name it when it comes again */
  const listed = new Map<string, string>();
  (tenants?.list ?? []).forEach((tenant, t) => {
    const own: string[] = [];
    tenant.keys.forEach((key, k) => {
      const path = `tenants.list.${t}.keys.${k}`;
      let hash: string;
      if ('sha256' in key) {
        hash = key.sha256;
      } else {
        const value = env[key.env];
        if (value === undefined || value === '') {
          issues.push({ path: `${path}.env`, reason: `the environment variable ${key.env} is not set (it holds a key of tenant ${tenant.name})` });
          return;
        }
        hash = sha256Hex(value);
      }
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
