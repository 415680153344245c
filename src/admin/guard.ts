// Whom the admin listener answers (api.md §10.5). Its routes are for operators
// and their tools (Prometheus, a kubelet's probes, curl), never for a web page:
// a request that carries Origin is refused, and so is one whose Host does not
// name the listener, which is what a page on a DNS name rebound to the
// listener's address sends. A purge also takes JSON only (a browser sends a
// text/plain or form POST without asking first) and, with admin.token, that
// token.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import { type Config, ConfigError, type ConfiguredKey, resolveKey, sha256Hex } from '../config/index.js';
import { NodeError } from '../errors.js';
import { mediaType } from '../wire/media-type.js';
import { bearerKey, unauthorized } from '../edge/tenants.js';

export type AdminSettings = Config['admin'];

/** At most one warn line per interval while requests are refused; the rest are counted in the next. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** A Host header is logged cut to this length: it is whatever a client sent. */
const LOGGED_HOST_CHARS = 100;

/** `name` or `[v6]`, then an optional port: the Host header's grammar (RFC 9110 §7.2). */
const HOST_HEADER = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::\d{1,5})?$/;

const UNSPECIFIED = new Set(['0.0.0.0', '::']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** The address an admin.host binds, without brackets, lower-case. */
function bound(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** Whether the listener is reachable on loopback only (127.0.0.0/8, ::1, localhost). */
export function bindsLoopbackOnly(host: string): boolean {
  const address = bound(host);
  return address === 'localhost' || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));
}

export class AdminGuard {
  /** names a Host may give besides this machine's addresses */
  private readonly names: ReadonlySet<string>;
  /** bound to every address: any address of this machine names the listener */
  private readonly everyAddress: boolean;
  /** sha256 of admin.token; undefined: a purge needs none */
  private readonly tokenHash: Buffer | undefined;
  private lastWarnAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    settings: AdminSettings,
    private readonly logger: Logger,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const address = bound(settings.host);
    this.everyAddress = UNSPECIFIED.has(address);
    const names = new Set(settings.allowedHosts);
    if (!this.everyAddress) names.add(address);
    if (this.everyAddress || bindsLoopbackOnly(address)) for (const name of LOOPBACK_NAMES) names.add(name);
    this.names = names;
    this.tokenHash = settings.token === undefined ? undefined : Buffer.from(tokenSha256(settings.token, env), 'hex');
  }

  /** Whether POST /cache/purge needs admin.token. */
  get tokenRequired(): boolean {
    return this.tokenHash !== undefined;
  }

  /** The refusal of a request to the admin listener (any route); null when it may be answered. */
  admit(req: IncomingMessage): NodeError | null {
    if (req.headers.origin !== undefined) {
      return this.refused(
        req,
        'origin',
        'the admin listener does not answer web pages: a request that carries Origin is refused',
      );
    }
    if (!this.namesListener(req.headers.host)) {
      return this.refused(
        req,
        'host',
        'the admin listener answers only a Host that names it: its address, localhost when it listens on loopback, or a name in admin.allowedHosts',
      );
    }
    return null;
  }

  /** The refusal of a purge that lacks the token (401) or is not JSON (400); null when it may run. */
  purgeRefusal(req: IncomingMessage): NodeError | null {
    if (this.tokenHash !== undefined) {
      const authorization = req.headers.authorization;
      const token = authorization === undefined ? undefined : bearerKey(authorization);
      if (token === undefined)
        return unauthorized('a cache purge needs admin.token: send Authorization: Bearer <token>');
      if (!timingSafeEqual(Buffer.from(sha256Hex(token), 'hex'), this.tokenHash))
        return unauthorized('a cache purge needs admin.token: the token sent is not it');
    }
    if (mediaType(req.headers['content-type']) !== 'application/json') {
      return NodeError.badRequest(
        `unsupported content type '${req.headers['content-type'] ?? 'none'}': a cache purge takes application/json`,
      );
    }
    return null;
  }

  private namesListener(header: string | undefined): boolean {
    const match = header === undefined ? null : HOST_HEADER.exec(header);
    if (match === null) return false;
    const name = (match[1] ?? match[2]!).toLowerCase();
    if (this.names.has(name)) return true;
    // A probe or a scrape by the pod's (or host's) own address: no DNS name to rebind.
    return (
      this.everyAddress &&
      isIP(name) !== 0 &&
      Object.values(networkInterfaces()).some((addresses) => addresses?.some((a) => a.address.toLowerCase() === name))
    );
  }

  private refused(req: IncomingMessage, why: 'origin' | 'host', message: string): NodeError {
    const now = performance.now();
    if (now - this.lastWarnAt < REFUSAL_LOG_INTERVAL_MS) this.suppressed++;
    else {
      const host = (req.headers.host ?? '').slice(0, LOGGED_HOST_CHARS);
      this.logger.warn(
        {
          refused: why,
          host,
          path: (req.url ?? '').split('?', 1)[0]!.slice(0, LOGGED_HOST_CHARS),
          suppressed: this.suppressed,
        },
        `admin listener refused a request (${why})`,
      );
      this.lastWarnAt = now;
      this.suppressed = 0;
    }
    return new NodeError(403, 'forbidden', message, { reason: 'forbidden' });
  }
}

/** admin.token's sha256; the config's loader already refused a token it could not know. */
function tokenSha256(token: ConfiguredKey, env: NodeJS.ProcessEnv): string {
  const hash = resolveKey(token, env, 'admin.token', 'the admin token');
  if (typeof hash !== 'string') throw new ConfigError([hash]);
  return hash;
}
