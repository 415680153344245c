// Who is calling (api.md §10.2): a tenant of the config's list, found by the API
// key a client presents (`Authorization: Bearer <key>`) or by the name a trusted
// layer in front sets in tenants.trustedHeader, or the anonymous tenant. Keys are
// known only by their sha256; a presented key that proves known is memoised, so
// a request costs one Map lookup. A key is never logged or exported: only the
// tenant's name is.
import type { PublicRequest } from './message.js';
import { type Config, ConfigError, type Priority, resolveTenantKeys, sha256Hex } from '../config/index.js';
import { NodeError } from '../errors.js';

export interface TenantLimits {
  requestsPerSecond?: number;
  nodeUnitsPerMinute?: number;
}

export interface Tenant extends TenantLimits {
  readonly name: string;
  readonly priority: Priority;
  /** the tenant's own limits count per client address (the anonymous tenant) */
  readonly byAddress: boolean;
  /** a client-side key: accepted only from these origins */
  readonly origins?: ReadonlySet<string>;
  /** limits for each client address within the tenant */
  readonly perAddress?: TenantLimits;
}

type Section = Config['tenants'];

/** Every client, when there is no tenants section: anonymous and unlimited, with the whole of every node budget. */
const UNLIMITED: Tenant = { name: 'anonymous', priority: 'high', byAddress: true };

/** Known keys memoised at most: a client cycling keys cannot grow the memo without bound. */
const MEMO_MAX = 10_000;

const BEARER = /^bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;

export class TenantDirectory {
  private section: Section;
  private anonymous: Tenant | null = UNLIMITED;
  private byHash = new Map<string, Tenant>();
  private byName = new Map<string, Tenant>();
  /** presented key → its tenant, for keys that proved known */
  private memo = new Map<string, Tenant>();

  constructor(section: Section, env: NodeJS.ProcessEnv = process.env) {
    this.section = section;
    this.load(section, env);
  }

  /** Replaces the keys, tenants and limits (SIGHUP); requests in flight keep the tenant they were given. */
  replace(section: Section, env: NodeJS.ProcessEnv = process.env): void {
    this.load(section, env);
    this.section = section;
  }

  /** Whether tenants are configured at all (without them every client is anonymous and unlimited). */
  get configured(): boolean {
    return this.section !== undefined;
  }

  /** The tenant names, for metrics that start at zero. */
  names(): string[] {
    return ['anonymous', ...this.byName.keys()];
  }

  /** The tenant of a request, or the 401/403 to answer it with. `trustedPeer`: the peer may name the tenant in the trusted header. */
  identify(req: PublicRequest, { trustedPeer }: { trustedPeer: boolean }): Tenant | NodeError {
    const section = this.section;
    if (section === undefined) return UNLIMITED;
    if (trustedPeer && section.trustedHeader !== undefined) {
      const named = req.headers[section.trustedHeader];
      const tenant = typeof named === 'string' ? this.byName.get(named) : undefined;
      if (tenant !== undefined) return tenant;
    }
    const authorization = req.headers.authorization;
    if (authorization === undefined)
      return this.anonymous ?? unauthorized('an API key is required: send Authorization: Bearer <key>');
    const key = bearerKey(authorization);
    if (key === undefined) return unauthorized('the Authorization header must be Bearer <key>');
    return this.tenantOfKey(key) ?? unauthorized('unknown API key');
  }

  /** The 403 for a client-side key presented from another origin than its own; null when the origin is one of them. */
  originRefusal(tenant: Tenant, req: PublicRequest): NodeError | null {
    if (tenant.origins === undefined || tenant.origins.has(req.headers.origin ?? '')) return null;
    return new NodeError(
      403,
      'forbidden',
      `the API key of tenant ${tenant.name} is accepted only from its web origins`,
      { reason: 'forbidden' },
    );
  }

  private tenantOfKey(key: string): Tenant | undefined {
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const tenant = this.byHash.get(sha256Hex(key));
    if (tenant !== undefined) {
      if (this.memo.size >= MEMO_MAX) this.memo.clear();
      this.memo.set(key, tenant);
    }
    return tenant;
  }

  private load(section: Section, env: NodeJS.ProcessEnv): void {
    // The config's loader resolved the keys with the same rules: a problem here means a config that did not come through it.
    const keys = resolveTenantKeys(section, env);
    if (keys.issues.length > 0) throw new ConfigError(keys.issues);
    const byHash = new Map<string, Tenant>();
    const byName = new Map<string, Tenant>();
    for (const [index, entry] of (section?.list ?? []).entries()) {
      const tenant: Tenant = {
        name: entry.name,
        priority: entry.priority,
        byAddress: false,
        requestsPerSecond: entry.requestsPerSecond,
        nodeUnitsPerMinute: entry.nodeUnitsPerMinute,
        origins: entry.origins === undefined ? undefined : new Set(entry.origins),
        perAddress: entry.perAddress,
      };
      byName.set(tenant.name, tenant);
      for (const hash of keys.hashes[index] ?? []) byHash.set(hash, tenant);
    }
    const anonymous = section?.anonymous;
    this.anonymous =
      section === undefined
        ? UNLIMITED
        : anonymous === false
          ? null
          : { name: 'anonymous', byAddress: true, ...anonymous! };
    this.byHash = byHash;
    this.byName = byName;
    this.memo = new Map();
  }
}

/** The key of an `Authorization: Bearer <key>` header; undefined when the header is not that. */
export function bearerKey(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

/** The 401 of a missing or unknown Bearer key. */
export function unauthorized(message: string): NodeError {
  return new NodeError(401, 'unauthorized', message, {
    reason: 'unauthorized',
    headers: { 'www-authenticate': 'Bearer' },
  });
}
