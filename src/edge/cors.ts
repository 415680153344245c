// Browsers (api.md §10.1): a page on another origin may do through the proxy
// everything it can do against a node. A request with an Origin the config
// allows gets the CORS headers on its reply, whatever answers it; a preflight is
// answered here, never by a node. The headers are added per request, never stored
// with a cached answer, so one origin's reply is never served to another.
import type { LedgerHeaderNames } from '../ledger/headers.js';
import type { Exchange } from './exchange.js';
import type { PublicReply, PublicRequest } from './message.js';

export interface CorsSettings {
  enabled: boolean;
  /** '*': any origin; otherwise the exact origins allowed */
  origins: '*' | readonly string[];
  maxAgeSeconds: number;
}

/** What a preflight may ask to send: header names only (RFC 9110 tokens), so the echo cannot inject anything. */
const HEADER_LIST = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:\s*,\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*$/;

export class Cors {
  /** the exposed headers, made for the header names they name (with vendor: auto, the nodes' once known) */
  private exposed = { for: '', list: '' };
  private readonly allowed: ReadonlySet<string> | undefined;

  constructor(
    private readonly settings: CorsSettings,
    private readonly names: LedgerHeaderNames,
  ) {
    this.allowed = settings.origins === '*' ? undefined : new Set(settings.origins);
  }

  /** Beyond a node: what the SDK reads (the ledger, the cursor, gas) and what says how the proxy answered or when to retry. */
  private expose(): string {
    const names = this.names;
    if (this.exposed.for === names.ledgerVersion) return this.exposed.list;
    const list = [
      names.chainId,
      names.ledgerVersion,
      names.oldestVersion,
      names.timestampUsec,
      names.epoch,
      names.blockHeight,
      names.oldestBlockHeight,
      names.cursor,
      names.gasUsed,
      'x-cache',
      'x-cache-tier',
      'x-request-id',
      'retry-after',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
    ].join(', ');
    this.exposed = { for: names.ledgerVersion, list };
    return list;
  }

  /**
   * Answers a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method,
   * on a /v1 path) and says so; for any other request, sets the CORS headers its
   * replies carry (none without an Origin, or with one not allowed) and their Vary.
   * `Vary: Origin` whenever CORS is on: every reply's CORS headers then depend on the
   * request's Origin (the grant echoes it, a listed origin gets what another does
   * not, and a request without one gets none), so a shared cache in front must
   * keep them apart, the reply to a request without Origin included (the Fetch
   * standard's "CORS protocol and HTTP caches").
   */
  answeredPreflight(exchange: Exchange): boolean {
    if (!this.settings.enabled) return false;
    const req = exchange.req;
    const origin = req.headers.origin;
    if (
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      req.headers['access-control-request-method'] !== undefined &&
      /^\/v1(?:[/?]|$)/.test(req.url ?? '')
    ) {
      exchange.endpoint = 'preflight';
      this.answerPreflight(req, exchange.res);
      return true;
    }
    exchange.vary = 'Origin';
    const allowed = this.allowedOrigin(req);
    if (allowed !== undefined)
      exchange.edgeHeaders = [
        'access-control-allow-origin',
        allowed,
        'access-control-allow-credentials',
        'true',
        'access-control-expose-headers',
        this.expose(),
      ];
    return false;
  }

  /** Answers a preflight: 204, the methods a node allows, the headers asked for, how long to keep the answer. */
  private answerPreflight(req: PublicRequest, res: PublicReply): void {
    const headers: string[] = ['vary', 'Origin, Access-Control-Request-Headers'];
    const origin = this.allowedOrigin(req);
    if (origin !== undefined) {
      headers.push(
        'access-control-allow-origin',
        origin,
        'access-control-allow-credentials',
        'true',
        'access-control-allow-methods',
        'GET, POST',
      );
      const asked = req.headers['access-control-request-headers']?.trim();
      if (asked !== undefined && asked !== '' && HEADER_LIST.test(asked))
        headers.push('access-control-allow-headers', asked);
      headers.push('access-control-max-age', String(this.settings.maxAgeSeconds));
    }
    headers.push('content-length', '0');
    res.writeHead(204, headers);
    res.end();
  }

  /** The origin a request may be granted (CORS is on): undefined without one, or with one not allowed. */
  private allowedOrigin(req: PublicRequest): string | undefined {
    const origin = req.headers.origin;
    if (origin === undefined || origin === '') return undefined;
    return this.allowed === undefined || this.allowed.has(origin) ? origin : undefined;
  }
}

/**
 * One Vary value of `received` (a node's, as one or several header lines) and
 * the proxy's `own` field name: each name once, whatever its case; `*` stands
 * for all of them.
 */
export function joinVary(received: string | readonly string[] | undefined, own: string): string {
  const names = (Array.isArray(received) ? received.join(',') : ((received as string | undefined) ?? ''))
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.includes('*')) return '*';
  if (!names.some((name) => name.toLowerCase() === own.toLowerCase())) names.push(own);
  return names.join(', ');
}
