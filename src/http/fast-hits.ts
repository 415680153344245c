// Reads of the cached routes, answered before fastify builds its request and
// reply objects, routes, and runs its hooks: that pipeline was most of what a hit
// cost beyond Node's own HTTP work (bench scenario 1), and a good part of what a
// Redis hit or a forwarded read added.
//
// Only the plainest requests are taken: HTTP/1.1 with Host, no Expect or
// Transfer-Encoding, a GET without a body or a POST with a Content-Length body of
// at most FAST_BODY_MAX bytes (and within server.bodyLimitBytes), and a path of a cached route (routes/table.ts,
// matched and parsed by the same code as the fastify routes). The read itself is
// the one read path (ReadThrough.read) and the reply the one writer's, so a client
// cannot tell which way it came (test/integration/fast-hits.test.ts). Input the
// parser refuses and anything unusual goes to fastify as it came, the body
// already read handed back through the read routes' preParsing hook, so input
// errors have one implementation.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { NodeError } from '../errors.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { RouteMatch } from '../routes/table.js';
import { acceptsGzip } from '../serve/compress.js';
import type { ReadResult } from '../serve/read-through.js';
import type { ReadRequest } from '../wire/read-request.js';
import type { ReplyWriter } from './reply.js';
import { Spellings } from './spellings.js';

/** Larger bodies are left to fastify: the cached routes' bodies are far smaller. */
const FAST_BODY_MAX = 16 * 1024;

/**
 * Parsed requests by their exact spelling (method, url, content type, accept,
 * body), so a repeated request is not parsed and canonicalised again: every
 * route's hit costs what a raw_item hit costs. Parsing is a pure function of
 * those bytes, so an entry never goes stale; the chain, the version's pruning and
 * the answer itself are looked up afresh every time. A spelling is kept once it is
 * a hit (memory or Redis): refused input and misses cost no memory here.
 *
 * They must hold about as many spellings as the memory tier holds hot entries:
 * with fewer, the two generations turn over all the time, and every hit of a key
 * that dropped out is parsed again and moved back (the bench: 8 MiB for 10,000
 * keys cost raw_item hits 10% and resource hits 15% of their throughput). A
 * bound, not an allocation: only spellings that were hits are kept.
 */
const MIN_SPELLING_BYTES = 64 * 1024 * 1024;

/**
 * The bytes of spellings kept beside a memory tier of `memoryMaxBytes`: a quarter
 * of it, at least MIN_SPELLING_BYTES. A spelling is charged about 2 KiB (what it
 * holds, measured), so the default 256 MiB tier keeps the 30,000 or so hottest
 * spellings; 10,000 keys need about 20 MiB.
 */
export function spellingBytesFor(memoryMaxBytes: number): number {
  return Math.max(MIN_SPELLING_BYTES, Math.floor(memoryMaxBytes / 4));
}
/** The count is bounded too (the Maps' own tables): one spelling per this many bytes, less than any real spelling is charged. */
const SPELLING_MIN_CHARGE = 1024;
/**
 * Charged per spelling beyond the lengths of its strings and body: measured, as
 * live heap after GC per spelling kept (1.5–2.2 KiB for the bench's routes,
 * 1.0–1.4 KiB of it beyond the lengths: the Map slot, the parsed request and its
 * Buffer, the kept key text).
 */
const SPELLING_OVERHEAD_BYTES = 1200;

/** The body a request arrived with, when the fast path read it and then handed the request on. */
const PRE_READ_BODY = Symbol('ledger-proxy.preReadBody');
type PreRead = IncomingMessage & { [PRE_READ_BODY]?: Buffer };

/** How a read served here went, for the request log and metrics. */
export interface FastOutcome {
  cache: string;
  status: number;
  tier?: string;
  upstream?: string;
}

export interface FastHitsDeps {
  /** the cached route a request line names, if any */
  match(method: string, url: string): RouteMatch | undefined;
  /** whether a request line may name a cached route (one regex test) */
  mayMatch(method: string, url: string): boolean;
  /** the read path (ReadThrough.read): synchronous on a memory hit; throws or rejects with the proxy's own errors */
  read(req: ReadRequest): ReadResult | Promise<ReadResult>;
  /** the snapshot the proxy's own errors carry */
  snapshot(): LedgerInfo | null;
  writer: ReplyWriter;
  /** told of every read served here, as the onResponse hook is of the others */
  onServed(family: string, outcome: FastOutcome, startedAt: number): void;
  /** the bytes of spellings kept (spellingBytesFor the memory tier's size; default MIN_SPELLING_BYTES) */
  spellingBytes?: number;
  /** the per-client rate limit: counts the request, and says when it must be refused */
  rateLimit?: { admit(req: IncomingMessage): NodeError | null; snapshot(): LedgerInfo | null };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Wraps fastify's request handler: plain reads of the cached routes are answered
 * here, the rest go on to it. A body over `bodyLimitBytes` is left to fastify, which refuses it.
 */
export function withFastHits(deps: FastHitsDeps, next: Handler, bodyLimitBytes = FAST_BODY_MAX): Handler {
  const maxBody = Math.min(FAST_BODY_MAX, bodyLimitBytes);
  // Charged for the spelling, the parsed request's own strings and body, and the objects around them.
  const spellingBytes = deps.spellingBytes ?? MIN_SPELLING_BYTES;
  const spellings = new Spellings(
    Math.ceil(spellingBytes / SPELLING_MIN_CHARGE),
    spellingBytes,
    (read, spelling) => spelling.length + read.identity.length + read.path.length + (read.body?.length ?? 0) + SPELLING_OVERHEAD_BYTES,
  );

  const written = (res: ServerResponse, family: string, result: ReadResult, startedAt: number, acceptEncoding: string | undefined): void => {
    deps.writer.writeRaw(res, result, result.gzip !== undefined && acceptsGzip(acceptEncoding));
    deps.onServed(family, result, startedAt);
  };
  // The proxy's own errors (not ready, pruned, no node could answer) carry the freshest snapshot.
  const failed = (res: ServerResponse, family: string, err: unknown, startedAt: number): void => {
    const error = NodeError.from(err);
    deps.writer.writeRawError(res, error, deps.snapshot());
    deps.onServed(family, { cache: 'BYPASS', status: error.status }, startedAt);
  };

  const serve = (req: IncomingMessage, res: ServerResponse, url: string, body: Buffer, startedAt: number): void => {
    const headers = req.headers;
    const spelling = `${req.method} ${url}\n${headers['content-type'] ?? ''}\n${headers.accept ?? ''}\n${body.toString('latin1')}`;
    let read = spellings.get(spelling);
    const known = read !== undefined;
    if (read === undefined) {
      const matched = deps.match(req.method!, url);
      try {
        if (matched !== undefined) {
          read = matched.route.parse({ params: matched.params, query: matched.query, contentType: headers['content-type'], accept: headers.accept, body });
        }
      } catch {
        // Refused input: fastify's route refuses it again, with the error body.
      }
    }
    if (read === undefined) {
      if (body.length > 0) (req as PreRead)[PRE_READ_BODY] = body;
      return next(req, res);
    }
    const family = read.route.family;
    const acceptEncoding = headers['accept-encoding'];
    let result: ReadResult | Promise<ReadResult>;
    try {
      result = deps.read(read);
    } catch (err) {
      return failed(res, family, err, startedAt);
    }
    if (result instanceof Promise) {
      result
        .then(
          (r) => {
            // A Redis hit is remembered as a memory hit is: its spelling will be asked again.
            if (!known && r.cache === 'HIT') spellings.set(spelling, read);
            written(res, family, r, startedAt, acceptEncoding);
          },
          (err) => failed(res, family, err, startedAt),
        )
        // A reply that cannot be written (the client is gone mid-write) ends its connection, never the process.
        .catch(() => res.destroy());
    } else {
      // Remembered once it is a hit: a spelling seen only as a miss costs no memory.
      if (!known && result.cache === 'HIT') spellings.set(spelling, read);
      written(res, family, result, startedAt, acceptEncoding);
    }
  };

  return (req, res) => {
    const method = req.method;
    const url = req.url ?? '';
    // Only the cached routes: everything else goes straight on, its body unread.
    if ((method !== 'GET' && method !== 'POST') || !deps.mayMatch(method, url)) return next(req, res);
    const headers = req.headers;
    const length = headers['content-length'] === undefined ? 0 : Number(headers['content-length']);
    if (
      req.httpVersion !== '1.1' ||
      headers.host === undefined ||
      headers.expect !== undefined ||
      headers['transfer-encoding'] !== undefined ||
      !(method === 'GET' ? length === 0 : length > 0 && length <= maxBody)
    ) {
      return next(req, res);
    }
    const startedAt = performance.now();
    const refused = deps.rateLimit?.admit(req) ?? null;
    if (refused !== null) return deps.writer.writeRawError(res, refused, deps.rateLimit!.snapshot());
    if (method === 'GET') return serve(req, res, url, EMPTY, startedAt);
    readBody(req, length, (body) => {
      if (body === null) return next(req, res);
      serve(req, res, url, body, startedAt);
    });
  };
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads exactly `length` bytes of body. null when the body is not that long (the
 * stream ended early or failed): then fastify reports it, from what is left.
 * The listeners stay: once the stream has ended or failed, nothing else is
 * emitted that they would take from fastify.
 */
function readBody(req: IncomingMessage, length: number, done: (body: Buffer | null) => void): void {
  // Nearly every body arrives in one chunk: a list is made only for a second one.
  let first: Buffer | undefined;
  let rest: Buffer[] | undefined;
  let received = 0;
  let ended = false;
  req.on('data', (chunk: Buffer) => {
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
    received += chunk.length;
  });
  const onEnd = (): void => {
    if (ended) return;
    ended = true;
    const body = rest !== undefined ? Buffer.concat(rest, received) : (first ?? EMPTY);
    if (received !== length) {
      // fastify reads the same stream next: give it back what was read, so it
      // sees the short (or long) body and answers as it always does.
      (req as PreRead)[PRE_READ_BODY] = body;
      return done(null);
    }
    // Parsed at once and not kept on a hit (a miss hands it to fastify, which copies it).
    done(body);
  };
  req.on('end', onEnd);
  req.on('error', onEnd);
}

/**
 * The read routes' preParsing hook: a request the fast path already read is
 * parsed from that body, since its own stream has ended.
 */
export function preReadBody<T extends Readable>(request: { raw: IncomingMessage }, payload: T): T | Readable {
  const body = (request.raw as PreRead)[PRE_READ_BODY];
  return body === undefined ? payload : Readable.from([body]);
}
