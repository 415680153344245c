// A bounded, in-process load generator for the fault suites: an open-loop request
// rate over one undici Pool against 127.0.0.1 only, that stops by itself. Every
// reply is classified (correct answer, 503 internal_error body, or a problem) and
// timed, so a suite can assert on each one.
import { Pool } from 'undici';

/** One request the generator sends, with the check of its reply. */
export interface LoadRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** null when the 200 reply is the right answer; otherwise what is wrong with it */
  check(reply: LoadReply): string | null;
}

export interface LoadReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

type Outcome = 'ok' | 'unavailable' | 'wrong' | 'socket_error' | 'hang';

interface LoadSample {
  kind: string;
  /** ms since the load started, when the request was sent */
  sentAt: number;
  /** ms until the whole reply was read (or the failure) */
  ms: number;
  status?: number;
  outcome: Outcome;
  /** for wrong / socket_error / hang: what happened */
  detail?: string;
}

export interface LoadReport {
  /** requests actually sent */
  sent: number;
  /** ticks at which every connection was busy, so no request was sent (the generator never queues) */
  skipped: number;
  samples: LoadSample[];
  byOutcome: Record<Outcome, number>;
  byStatus: Record<string, number>;
  maxMs: number;
  p99Ms: number;
  /** wall time of the run, ms */
  elapsedMs: number;
  /** performance.now() when the load started: sample.sentAt is relative to it */
  startedAt: number;
}

export interface LoadOptions {
  /** the proxy's base url: must be http://127.0.0.1:PORT */
  url: string;
  /** requests per second (at most 1000) */
  rps: number;
  /** how long requests are sent (at most 10 s) */
  durationMs: number;
  /** connections, and so requests in flight at most (default 20) */
  connections?: number;
  /** a request taking longer is abandoned and counted as a hang (default 5000, at most 10000) */
  hangMs?: number;
  /** the i-th request to send */
  next(i: number): LoadRequest;
}

const TICK_MS = 5;
const MAX_DURATION_MS = 10_000;
const MAX_RPS = 1000;
const MAX_HANG_MS = 10_000;

/** True for a node error body with 503 internal_error (api.md §5). */
function isUnavailableBody(reply: LoadReply): string | null {
  if (reply.status !== 503) return `status ${reply.status}`;
  if (reply.headers['content-type'] !== 'application/json')
    return `503 with content type ${reply.headers['content-type']}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.body.toString('utf8'));
  } catch {
    return `503 with a body that is not JSON: ${reply.body.toString('utf8').slice(0, 200)}`;
  }
  const b = body as Record<string, unknown>;
  if (typeof b !== 'object' || b === null || Object.keys(b).sort().join(',') !== 'error_code,message,vm_error_code') {
    return `503 with a body that is not the node error body: ${reply.body.toString('utf8').slice(0, 200)}`;
  }
  if (b.error_code !== 'internal_error' || b.vm_error_code !== null || typeof b.message !== 'string') {
    return `503 with error_code ${String(b.error_code)} vm_error_code ${String(b.vm_error_code)}`;
  }
  return null;
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const target = new URL(options.url);
  if (target.hostname !== '127.0.0.1' || target.protocol !== 'http:')
    throw new Error(`load only targets http://127.0.0.1, not ${options.url}`);
  if (!(options.rps > 0 && options.rps <= MAX_RPS)) throw new RangeError(`rps must be in (0, ${MAX_RPS}]`);
  if (!(options.durationMs > 0 && options.durationMs <= MAX_DURATION_MS))
    throw new RangeError(`durationMs must be in (0, ${MAX_DURATION_MS}]`);
  const connections = options.connections ?? 20;
  const hangMs = Math.min(options.hangMs ?? 5000, MAX_HANG_MS);

  const pool = new Pool(target.origin, {
    connections,
    pipelining: 1,
    headersTimeout: hangMs,
    bodyTimeout: hangMs,
    connectTimeout: hangMs,
    keepAliveTimeout: 4000,
  });
  const samples: LoadSample[] = [];
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let skipped = 0;
  let due = 0;
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;

  const fire = (req: LoadRequest): void => {
    const sentAt = elapsed();
    const done = (sample: Omit<LoadSample, 'kind' | 'sentAt' | 'ms'>): void => {
      samples.push({ kind: req.kind, sentAt, ms: elapsed() - sentAt, ...sample });
    };
    const p = (async () => {
      // An overall bound as well: a reply trickling in must not keep the run alive.
      const abort = AbortSignal.timeout(hangMs);
      try {
        const res = await pool.request({
          method: req.method,
          path: req.path,
          headers: req.headers,
          body: req.body,
          signal: abort,
        });
        const body = Buffer.from(await res.body.arrayBuffer());
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        const reply: LoadReply = { status: res.statusCode, headers, body };
        if (reply.status === 200) {
          const problem = req.check(reply);
          done(problem === null ? { status: 200, outcome: 'ok' } : { status: 200, outcome: 'wrong', detail: problem });
        } else {
          const problem = isUnavailableBody(reply);
          done(
            problem === null
              ? { status: reply.status, outcome: 'unavailable' }
              : {
                  status: reply.status,
                  outcome: 'wrong',
                  detail: `${problem}: ${body.toString('utf8').slice(0, 300)}`,
                },
          );
        }
      } catch (err) {
        const e = err as { code?: string; name?: string; message?: string };
        const timedOut = abort.aborted || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
        done({ outcome: timedOut ? 'hang' : 'socket_error', detail: `${e.code ?? e.name}: ${e.message}` });
      }
    })();
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = elapsed();
      if (now >= options.durationMs) {
        clearInterval(timer);
        resolve();
        return;
      }
      const target = Math.floor((now * options.rps) / 1000);
      while (due < target) {
        due++;
        if (inFlight.size >= connections) {
          skipped++;
          continue;
        }
        fire(options.next(sent));
        sent++;
      }
    }, TICK_MS);
  });
  // Every request is bounded by hangMs, so this ends.
  await Promise.all([...inFlight]);
  await pool.close();

  const byOutcome: Record<Outcome, number> = { ok: 0, unavailable: 0, wrong: 0, socket_error: 0, hang: 0 };
  const byStatus: Record<string, number> = {};
  for (const s of samples) {
    byOutcome[s.outcome]++;
    const key = s.status === undefined ? s.outcome : String(s.status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
  }
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    sent,
    skipped,
    samples,
    byOutcome,
    byStatus,
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1] : 0,
    p99Ms: sorted.length > 0 ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] : 0,
    elapsedMs: elapsed(),
    startedAt: started,
  };
}
