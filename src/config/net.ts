// Address rules the config schema applies: upstream base URLs, Redis URLs and the
// trustProxy list. Kept apart from the schema so each rule is a plain function
// that reads (and can be tested) on its own.

import { isIP } from 'node:net';

/** The upstream url that selects the built-in simulated node. */
export const SIM_URL = 'sim';

export type Checked = { ok: true; value: string } | { ok: false; reason: string };

const UPSTREAM_URL_REASON = "must be 'sim' or an http(s) URL";

/**
 * An upstream is given as its base URL; the proxy appends `/v1/...` itself, so a
 * trailing `/`, `/v1` or `/v1/` (what operators copy from node docs) is removed.
 * A path prefix before that is kept: some hosted nodes live under one.
 */
export function normaliseUpstreamUrl(raw: string): Checked {
  if (raw === SIM_URL) return { ok: true, value: SIM_URL };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: UPSTREAM_URL_REASON };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: UPSTREAM_URL_REASON };
  // `new URL` drops an empty `?` or `#`, so look at the raw text too.
  if (url.search !== '' || raw.includes('?')) return { ok: false, reason: 'must not have a query string' };
  if (url.hash !== '' || raw.includes('#')) return { ok: false, reason: 'must not have a fragment' };
  // Credentials in a URL end up in logs and metrics labels.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'must not contain credentials' };
  const path = url.pathname.replace(/\/$/, '').replace(/\/v1$/, '');
  return { ok: true, value: `${url.protocol}//${url.host}${path}` };
}

/**
 * The name an upstream gets when none is configured: 'sim', else its position
 * (node1, node2, …). A node has one name, in logs, metrics and the messages
 * clients see, and an address must never reach a client.
 */
export function defaultUpstreamName(normalisedUrl: string, index: number): string {
  return normalisedUrl === SIM_URL ? SIM_URL : `node${index + 1}`;
}

/** redis:// or rediss:// (TLS), with a host. Credentials are allowed: Redis AUTH uses them. */
export function checkRedisUrl(raw: string): Checked {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be a redis:// or rediss:// URL' };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    return { ok: false, reason: 'must be a redis:// or rediss:// URL' };
  }
  if (url.hostname === '') return { ok: false, reason: 'must name a host' };
  return { ok: true, value: raw };
}

/** Names proxy-addr (fastify's trustProxy) accepts in place of addresses. */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) return true;
  const [address = '', range, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  // An IPv4 netmask (10.0.0.0/255.0.0.0) is also accepted by proxy-addr.
  return family === 4 && isIP(range) === 4;
}

/**
 * fastify's trustProxy: true/false, a hop count, or a comma-separated list of
 * addresses / CIDR ranges. Checked here so a typo fails at start, not at the first
 * request that carries X-Forwarded-For.
 */
export function isTrustProxy(value: unknown): value is boolean | number | string {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0;
  if (typeof value !== 'string') return false;
  return value.split(',').every((entry) => isAddressOrRange(entry.trim()));
}
