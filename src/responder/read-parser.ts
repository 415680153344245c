// The parser of every cached route's requests: a request line, its headers and
// its body become a canonical ReadRequest (routes/ descriptors do the parsing),
// or the NodeError a node would answer for that input.
//
// Parsed requests are kept by their exact spelling (method, url, content type,
// accept, body), so a repeated request is not parsed and canonicalised again:
// every route's hit costs what a raw_item hit costs. Parsing is a pure function
// of those bytes, so an entry never goes stale; the chain, the version's pruning
// and the answer itself are looked up afresh every time. A spelling is kept once
// it was a hit (memory or Redis): refused input and misses cost no memory here.
import { memoryShares } from '../config/memory-shares.js';
import { NodeError } from '../errors.js';
import type { RouteMatch, RouteMatcher } from '../routes/table.js';
import type { ReadRequest } from '../model/read.js';
import { Spellings } from './spellings.js';
import { latin1 } from '../wire/latin1.js';
import type { PublicRequest } from '../edge/message.js';

/**
 * The bytes of spellings kept for a `cache.memory.maxBytes` of `memoryMaxBytes`:
 * their share of it (SPELLINGS_SHARE), no floor. A spelling is charged what it
 * holds (its lengths and SPELLING_OVERHEAD_BYTES). A bound, not an allocation:
 * only spellings that were hits are kept.
 */
export function spellingBytesFor(memoryMaxBytes: number): number {
  return memoryShares(memoryMaxBytes, { keepsLatestAnswers: false }).spellings;
}

/** The count is bounded too (the Maps' own tables): one spelling per this many bytes, less than any real spelling is charged. */
const SPELLING_MIN_CHARGE = 1024;
/**
 * Charged per spelling beyond the lengths of its strings and body: the Map slot,
 * the parsed request and its Buffer, the kept key text, as live heap after GC.
 * The memory bound (bench/memory-bound.mjs, where every key read twice keeps a
 * spelling) re-measures the whole process against the sizing rule with this charge.
 */
const SPELLING_OVERHEAD_BYTES = 1200;

/** A request parsed, with the spelling to remember it by once it proves a hit (undefined: already remembered). */
export interface Parsed {
  read: ReadRequest;
  spelling: string | undefined;
}

/** A cached route's request refused as a node would refuse it, with the route's family (metrics label). */
export interface RefusedRead {
  read: undefined;
  error: NodeError;
  family: string;
}

/** The two headers a cached route's request is read by. */
export interface ReadHeaders {
  'content-type'?: string;
  accept?: string;
}

/**
 * A request to a cached route, parsed by its descriptor (no memo): the canonical
 * request, or the error a node would answer; undefined when the line names no
 * cached route. The public entry reads through ReadParser; a purge of one
 * request (admin/purge-body.ts) parses it here, so it names the very key a read would.
 */
export function parseRead(
  routes: RouteMatcher,
  method: string,
  url: string,
  headers: ReadHeaders,
  body: Buffer,
): ReadRequest | NodeError | undefined {
  const matched = routes.match(method, url);
  return matched === undefined ? undefined : parseMatched(matched, url, headers, body);
}

/** A request whose line is matched to its cached route, parsed by the route's descriptor. */
function parseMatched(
  matched: RouteMatch | 'undecodable',
  url: string,
  headers: ReadHeaders,
  body: Buffer,
): ReadRequest | NodeError {
  if (matched === 'undecodable')
    return NodeError.badRequest(
      `malformed request URL: ${JSON.stringify(url.split('?', 1)[0])} is not valid percent-encoding`,
    );
  try {
    return matched.route.parse({
      params: matched.params,
      query: matched.query,
      contentType: headers['content-type'],
      accept: headers.accept,
      body,
    });
  } catch (err) {
    return NodeError.from(err);
  }
}

export class ReadParser {
  /** undefined when the budget holds no spelling (a memory tier of a few bytes): none is made or looked up */
  private readonly spellings: Spellings | undefined;
  /** Whether a request line may name a cached route: one regex test, before any body is read (the matcher's own). */
  readonly mayMatch: (method: string, url: string) => boolean;

  constructor(
    private readonly routes: RouteMatcher,
    /** the bytes of spellings kept */
    spellingBytes: number,
  ) {
    this.mayMatch = routes.mayMatch;
    if (spellingBytes < SPELLING_OVERHEAD_BYTES) return;
    this.spellings = new Spellings(
      Math.ceil(spellingBytes / SPELLING_MIN_CHARGE),
      spellingBytes,
      (read, spelling) =>
        spelling.length + read.identity.length + read.path.length + (read.body?.length ?? 0) + SPELLING_OVERHEAD_BYTES,
    );
  }

  /** The family (metrics label) of the cached route a request line names; 'other' when it names none. */
  familyOf(method: string, url: string): string {
    const matched = this.routes.match(method, url);
    return matched === undefined || matched === 'undecodable' ? 'other' : matched.route.family;
  }

  /** The canonical request, or the error a node would answer; undefined when the line names no cached route. */
  parse(req: PublicRequest, method: string, url: string, body: Buffer): Parsed | RefusedRead | undefined {
    const headers = req.headers;
    const spellings = this.spellings;
    let spelling: string | undefined;
    if (spellings !== undefined) {
      spelling = `${method} ${url}\n${headers['content-type'] ?? ''}\n${headers.accept ?? ''}\n${latin1(body)}`;
      const known = spellings.get(spelling);
      if (known !== undefined) return { read: known, spelling: undefined };
    }
    const matched = this.routes.match(method, url);
    if (matched === undefined) return undefined;
    const read = parseMatched(matched, url, headers, body);
    if (!(read instanceof NodeError)) return { read, spelling };
    return { read: undefined, error: read, family: matched === 'undecodable' ? 'other' : matched.route.family };
  }

  /** Keeps a parsed request under its new spelling (Parsed.spelling): it was a hit, so it will be asked again. */
  remember(spelling: string, read: ReadRequest): void {
    this.spellings?.set(spelling, read);
  }

  /** spellings held, for tests */
  get size(): number {
    return this.spellings?.size ?? 0;
  }
}
