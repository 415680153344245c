// Why a call to a node gave no answer, beside the transport's own errors:
// the node client says each in the proxy's words (node-client.ts).

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
