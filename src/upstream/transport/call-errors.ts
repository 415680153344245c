// Why a call to a node gave no answer: the bounds a call breaks, beside the
// transport's own errors, and each of them in the proxy's words (never the
// library's message text), as the node client reports them.

/** Raised when the call ran out of time; the caller says so in its own words. */
export class CallTimeout extends Error {
  constructor() {
    super('timed out');
    this.name = 'CallTimeout';
  }
}

/** The answer had more bytes (on the wire or decoded) than maxBytes. */
export class AnswerTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`answer larger than ${maxBytes} bytes`);
    this.name = 'AnswerTooLarge';
  }
}

/** The answer's Content-Encoding is unknown (`known` false), or its body does not decode. */
export class AnswerUndecodable extends Error {
  readonly known: boolean;

  constructor(
    readonly encoding: string,
    how: { known: boolean },
  ) {
    super(`answer does not decode (${encoding})`);
    this.name = 'AnswerUndecodable';
    this.known = how.known;
  }
}

/** The proxy-wide budget of answer bytes in flight had no room for this answer. */
export class AnswerBytesExhausted extends Error {
  constructor(readonly maxBytes: number) {
    super(`answer bytes in flight beyond ${maxBytes}`);
    this.name = 'AnswerBytesExhausted';
  }
}

export interface TransportFailure {
  text: string;
  reason: 'node_timeout' | 'node_failed' | 'node_broken';
  /** false: a failure this list does not name (the caller logs its message and code) */
  known: boolean;
}

/** Why a call gave no answer, in the proxy's words: never the library's message text. */
export function failureOf(err: unknown, timeoutMs: number): TransportFailure {
  if (err instanceof AnswerTooLarge)
    return {
      text: `answered more than the ${err.maxBytes / 1024 / 1024} MiB an answer may have`,
      reason: 'node_broken',
      known: true,
    };
  if (err instanceof AnswerUndecodable) {
    const what = err.known
      ? `a body that does not decompress (${err.encoding})`
      : `an unknown content encoding '${err.encoding}'`;
    return { text: `answered ${what}`, reason: 'node_broken', known: true };
  }
  return describeTransportError(err, timeoutMs);
}

/** A transport failure in the proxy's words: never the library's message text. */
function describeTransportError(err: unknown, timeoutMs: number): TransportFailure {
  const timedOut: TransportFailure = { text: `timed out after ${timeoutMs} ms`, reason: 'node_timeout', known: true };
  if (err instanceof CallTimeout) return timedOut;
  const e = err as { code?: string; name?: string };
  const failed = (text: string): TransportFailure => ({ text, reason: 'node_failed', known: true });
  switch (e.code) {
    case 'ECONNREFUSED':
      return failed('connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return failed('connection reset');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return timedOut;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return failed('host not found');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return failed('answer shorter or longer than its Content-Length');
  }
  if (e.name === 'AbortError') return failed('request aborted');
  return { text: 'the call failed', reason: 'node_failed', known: false };
}
