// Bounded probes for tests that hurt a running proxy (a worker killed, a drain):
// each request either gets an answer, a close, or is counted as a hang once its
// bound passes. Every connection is new (Connection: close), as a load balancer's
// fresh connections are, so nothing rides on a connection opened before the fault.
import { connect } from 'node:net';
import { Agent, request } from 'undici';

export type ProbeOutcome = { kind: 'answer'; status: number } | { kind: 'closed'; code: string } | { kind: 'hang' };

export interface ProbeSample {
  /** ms since the probes started, when the request was sent */
  sentAt: number;
  ms: number;
  outcome: ProbeOutcome;
}

/** One GET on a new connection, bounded by `boundMs` in all (connect, headers, body). */
export async function probeOnce(agent: Agent, url: string, boundMs: number): Promise<ProbeOutcome> {
  const signal = AbortSignal.timeout(boundMs);
  try {
    const res = await request(url, {
      dispatcher: agent,
      reset: true,
      signal,
      headersTimeout: boundMs,
      bodyTimeout: boundMs,
    });
    await res.body.arrayBuffer();
    return { kind: 'answer', status: res.statusCode };
  } catch (err) {
    const e = err as { code?: string; name?: string };
    if (signal.aborted || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
      return { kind: 'hang' };
    return { kind: 'closed', code: e.code ?? e.name ?? 'error' };
  }
}

export interface ProbeLoadOptions {
  /** must be http://127.0.0.1:PORT/...: probes only go to this machine */
  url: string;
  /** concurrent loops, each sending one request after the other (at most 32) */
  loops: number;
  /** how long new requests are sent (at most 10 s) */
  durationMs: number;
  /** a request not answered or closed within this counts as a hang (at most 10 s) */
  boundMs: number;
  /** called once, `atMs` after the start */
  at?: { atMs: number; run(): void | Promise<void> };
}

/** Loops of fresh-connection GETs for `durationMs`; resolves once every request has an outcome. */
export async function probeLoad(options: ProbeLoadOptions): Promise<ProbeSample[]> {
  const target = new URL(options.url);
  if (target.hostname !== '127.0.0.1') throw new Error(`probes only target 127.0.0.1, not ${options.url}`);
  if (options.loops > 32 || options.durationMs > 10_000 || options.boundMs > 10_000)
    throw new RangeError('probe load out of bounds');
  const agent = new Agent({ connections: options.loops, pipelining: 0 });
  const samples: ProbeSample[] = [];
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  const hook = options.at;
  const fired = hook
    ? new Promise<void>((resolve) => setTimeout(() => void Promise.resolve(hook.run()).finally(resolve), hook.atMs))
    : Promise.resolve();
  const loop = async (): Promise<void> => {
    while (elapsed() < options.durationMs) {
      const sentAt = elapsed();
      const outcome = await probeOnce(agent, options.url, options.boundMs);
      samples.push({ sentAt, ms: elapsed() - sentAt, outcome });
    }
  };
  await Promise.all([...Array.from({ length: options.loops }, loop), fired]);
  await agent.destroy();
  return samples.sort((a, b) => a.sentAt - b.sentAt);
}

/** Counts of outcomes, e.g. { "200": 950, "closed ECONNRESET": 2, hang: 1 }. */
export function tally(samples: ProbeSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { outcome } of samples) {
    const key =
      outcome.kind === 'answer'
        ? String(outcome.status)
        : outcome.kind === 'closed'
          ? `closed ${outcome.code}`
          : 'hang';
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Resolves true when a TCP connection to 127.0.0.1:port is refused, false when it is accepted. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}
