// A listener that cannot open (a second copy of the proxy, another program on the
// port, an address this machine does not have) is reported in one line that names
// the config key to change: what an operator needs, where Node's stack says
// nothing they can act on.

/**
 * The exit status of a start that could not listen. Distinct from a crash (1) and
 * a config error (2), so the primary of server.workers > 1 stops on it instead of
 * starting worker after worker that would fail the same way.
 */
export const EXIT_CANNOT_LISTEN = 3;

/** The config section of a listener: its `host` and `port` keys. */
export type ListenerKey = 'server' | 'admin' | 'sim';

export class ListenError extends Error {
  /** Stable code for callers (main.ts exits with EXIT_CANNOT_LISTEN on it). */
  readonly code = 'ERR_LISTEN';

  constructor(
    /** the config key to change: `server.port`, `admin.host`, … */
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/** What each system error says about the address, and which of its keys to change. */
const CAUSES: Readonly<Record<string, { key: 'host' | 'port'; says: string }>> = {
  EADDRINUSE: { key: 'port', says: 'is already in use (another copy of the proxy, or another program, listens there)' },
  EACCES: { key: 'port', says: 'may not be opened by this user (ports below 1024 need privileges)' },
  EADDRNOTAVAIL: { key: 'host', says: 'is not an address of this machine' },
  ENOTFOUND: { key: 'host', says: 'names no address this machine can resolve' },
  EAI_AGAIN: { key: 'host', says: 'could not be resolved (DNS did not answer)' },
};

/** `err` as a ListenError of the listener `section` on host:port, or undefined when it is no address problem. */
function listenErrorOf(section: ListenerKey, host: string, port: number, err: unknown): ListenError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const cause = typeof code === 'string' ? CAUSES[code] : undefined;
  if (cause === undefined) return undefined;
  const key = `${section}.${cause.key}`;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new ListenError(key, `${key}: cannot listen on ${address}: it ${cause.says}`);
}

/** Runs `listen` for the listener `section`; an address problem becomes a ListenError naming its key. */
export async function listenAs<T>(
  section: ListenerKey,
  host: string,
  port: number,
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    throw listenErrorOf(section, host, port, err) ?? err;
  }
}
