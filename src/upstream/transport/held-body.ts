// The bytes of an answer held while it arrives: within the answer cap, counted
// against the proxy-wide budget of answer bytes in flight until the call settles,
// and joined at the end into one buffer of exactly their size.
import type { AnswerBytes } from './answer-bytes.js';
import { AnswerBytesExhausted, AnswerTooLarge } from './call-errors.js';

export class HeldBody {
  // Nearly every answer arrives in one chunk: a list is made only for a second one.
  private first: Buffer | undefined;
  private rest: Buffer[] | undefined;
  /** bytes held (decoded ones, for a compressed answer) */
  private size = 0;
  /** bytes taken from the budget, given back by release() */
  private reserved = 0;

  constructor(
    /** the most bytes the answer may have */
    private readonly maxBytes: number,
    /** the budget the bytes held count against; absent: not counted (a probe) */
    private readonly inFlight: AnswerBytes | undefined,
  ) {}

  /** Holds `chunk`; the error that ends the call when it breaks a bound. */
  hold(chunk: Buffer): Error | undefined {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return new AnswerTooLarge(this.maxBytes);
    if (this.size > this.reserved) {
      const refused = this.reserve(this.size - this.reserved);
      if (refused !== undefined) return refused;
    }
    if (this.first === undefined) this.first = chunk;
    else (this.rest ??= [this.first]).push(chunk);
    return undefined;
  }

  /** Takes `n` more bytes of the budget (a declared length, before any byte is held); the error when they do not fit. */
  reserve(n: number): Error | undefined {
    const budget = this.inFlight;
    if (budget !== undefined && !budget.take(n)) return new AnswerBytesExhausted(budget.max);
    this.reserved += n;
    return undefined;
  }

  /**
   * The body in a copy of its own: a cached answer never keeps a socket's or the
   * pool's buffer alive. The chunks are let go.
   */
  joined(): Buffer {
    const body = Buffer.allocUnsafeSlow(this.size);
    let at = 0;
    for (const chunk of this.rest ?? (this.first === undefined ? [] : [this.first])) at += chunk.copy(body, at);
    this.first = this.rest = undefined;
    return body;
  }

  /** Lets go of what is held, and gives its bytes back to the budget. */
  release(): void {
    this.first = this.rest = undefined;
    if (this.reserved > 0) this.inFlight?.give(this.reserved);
    this.reserved = 0;
  }
}
