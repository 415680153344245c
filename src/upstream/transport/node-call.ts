// One HTTP call to a node through undici's dispatch API: the answer's
// status, headers and whole body (decoded as its Content-Encoding says), or why
// there is none. request() wraps the same dispatch in a body stream and an
// AbortSignal per call, which cost every forwarded read measurable CPU; a node's
// answer is read whole anyway.
//
// Everything an answer holds is bounded while it arrives: the answer cap on the
// wire and again decoded (a compressed answer is decoded as a stream, so a small
// body that inflates without end is abandoned at the cap, not decoded whole),
// the proxy-wide budget of answer bytes in flight (the bytes held: held-body.ts),
// and the call's deadline, which runs from the request's write (call-deadline.ts)
// until the last decoded byte; a streamed
// answer's delivery deadline runs until its last byte arrives, but not while its
// reader is not reading.
import { Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import type { AnswerBytes } from './answer-bytes.js';
import { CallDeadline } from './call-deadline.js';
import { Countdown } from './countdown.js';
import { AnswerTooLarge, AnswerUndecodable, CallTimeout } from './call-errors.js';
import { HeldBody } from './held-body.js';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** decoded, in an exact-size copy: a cached answer never keeps a socket's or the pool's buffer alive (empty when streamed) */
  body: Buffer;
  /** the body as it arrives, for an answer streamed on (limits.stream) */
  stream?: Readable;
}

export interface CallLimits {
  /** the call from when its request is written, decoding included; apart, the wait for a connection before it */
  timeoutMs: number;
  /** a hedge that lost: the call ends with the signal's reason */
  signal?: AbortSignal;
  /** the most bytes an answer may have, on the wire and decoded (default: no cap) */
  maxBytes?: number;
  /** the proxy-wide budget the bytes held count against; absent: not counted (a probe) */
  inFlight?: AnswerBytes;
  /** an answer to HEAD: no body to decode or hold, whatever its headers say */
  head?: boolean;
  /**
   * Stream a success (status below 400, not compressed) on as it arrives instead
   * of holding it: resolved at the answer's headers, with the body in `stream`,
   * which pauses the socket while its reader is behind. Errors are still read
   * whole: they are judged (and small).
   */
  stream?: boolean;
  /**
   * A streamed answer must be whole within `withinMs` of the call's start, not counting
   * the time its reader was not reading: past it the stream is destroyed with `error()`.
   */
  delivery?: { withinMs: number; error: () => Error };
}

/** Decoders by Content-Encoding; their output arrives in chunks of this size. */
const DECODED_CHUNK_BYTES = 64 * 1024;
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip({ chunkSize: DECODED_CHUNK_BYTES }),
  'x-gzip': () => createGunzip({ chunkSize: DECODED_CHUNK_BYTES }),
  deflate: () => createInflate({ chunkSize: DECODED_CHUNK_BYTES }),
  br: () => createBrotliDecompress({ chunkSize: DECODED_CHUNK_BYTES }),
};

/**
 * Sends `options` on `dispatcher` and collects the answer. Rejects with
 * CallTimeout after limits.timeoutMs, with the signal's reason when it is
 * aborted, with AnswerTooLarge, AnswerUndecodable or AnswerBytesExhausted as soon
 * as the answer breaks a bound (the call itself aborted each time), or with
 * the transport's error.
 */
export function callNode(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  limits: CallLimits,
): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const reader = new AnswerReader(limits, resolve, reject);
    if (reader.listen()) dispatcher.dispatch(options, reader.handler());
  });
}

/** The part of undici's handler controller used here. */
interface Controller {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
  readonly paused: boolean;
}

type Headers = RawAnswer['headers'];

class AnswerReader {
  private controller: Controller | undefined;
  /** why the call was cut short before undici handed over its controller */
  private cutShort: Error | undefined;
  private settled = false;
  private status = 0;
  private headers: Headers = {};
  private readonly held: HeldBody;
  /** bytes received on the wire */
  private wire = 0;
  private decoder: Transform | undefined;
  /** the body streamed on, once the headers said to (limits.stream) */
  private streamed: Readable | undefined;
  /** the streamed answer's delivery deadline (limits.delivery), running while its reader reads */
  private delivering: Countdown | undefined;
  private readonly startedAt: number; // performance.now(), when a delivery deadline counts from it
  private readonly maxBytes: number;
  private readonly deadline: CallDeadline;

  constructor(
    private readonly limits: CallLimits,
    private readonly resolve: (answer: RawAnswer) => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
    this.held = new HeldBody(this.maxBytes, limits.inFlight);
    this.startedAt = limits.delivery === undefined ? 0 : performance.now();
    this.deadline = new CallDeadline(limits.timeoutMs, () => this.cut(new CallTimeout()));
  }

  /** Follows the signal; false when it is aborted already (then nothing is sent). */
  listen(): boolean {
    const { signal } = this.limits;
    if (signal === undefined) return true;
    if (signal.aborted) {
      this.onAbort();
      return false;
    }
    signal.addEventListener('abort', this.onAbort, { once: true });
    return true;
  }

  handler(): Dispatcher.DispatchHandler {
    return {
      onRequestStart: (c: Controller) => {
        this.controller = c;
        if (this.cutShort !== undefined) c.abort(this.cutShort);
        else this.deadline.write();
      },
      onResponseStart: (_c: Controller, status: number, headers: Headers) => this.started(status, headers),
      onResponseData: (c: Controller, chunk: Buffer) => this.received(c, chunk),
      onResponseEnd: () => this.ended(),
      onResponseError: (_c: Controller, err: Error) => this.failed(err),
    } as unknown as Dispatcher.DispatchHandler;
  }

  private readonly onAbort = (): void => {
    const reason: unknown = this.limits.signal?.reason;
    this.cut(reason instanceof Error ? reason : new Error('request aborted'));
  };

  private started(status: number, headers: Headers): void {
    this.status = status;
    this.headers = headers;
    if (this.settled || this.limits.head) return;
    // A declared length is checked, and taken from the budget, before any byte is held.
    const length = Number(firstHeader(headers['content-length']));
    if (length > this.maxBytes) return this.cut(new AnswerTooLarge(this.maxBytes));
    const encoding = (firstHeader(headers['content-encoding']) ?? 'identity').trim().toLowerCase();
    if (encoding === 'identity' || encoding === '') {
      if (this.limits.stream && status < 400) return this.streamOn();
      const refused = length > 0 ? this.held.reserve(length) : undefined;
      if (refused !== undefined) this.cut(refused);
      return;
    }
    const make = DECODERS[encoding];
    if (make === undefined) return this.cut(new AnswerUndecodable(encoding, { known: false }));
    const decoder = make();
    decoder.on('data', (chunk: Buffer) => this.hold(chunk));
    decoder.on('error', () => this.cut(new AnswerUndecodable(encoding, { known: true })));
    decoder.on('end', () => this.finish());
    this.decoder = decoder;
  }

  /** Settles with the headers and a stream of the body: nothing of it is held here, or counted against the budget. */
  private streamOn(): void {
    const stream = new Readable({
      read: () => {
        if (!this.controller?.paused) return;
        this.controller.resume();
        this.delivering?.resume();
      },
      // The reader went away (the client left), or the node was too slow: the call ends with it.
      destroy: (err, done) => {
        this.delivering?.stop();
        if (!stream.readableEnded) this.controller?.abort(err ?? new Error('the answer was not read to its end'));
        done(err);
      },
    });
    this.streamed = stream;
    const delivery = this.limits.delivery;
    if (delivery !== undefined) {
      this.delivering = new Countdown(delivery.withinMs - (performance.now() - this.startedAt), () =>
        stream.destroy(delivery.error()),
      );
    }
    this.settle();
    this.resolve({ status: this.status, headers: this.headers, body: EMPTY, stream });
  }

  private received(c: Controller, chunk: Buffer): void {
    if (this.streamed !== undefined) {
      // The reader is behind: the node waits, and so does its deadline.
      if (!this.streamed.push(chunk)) {
        c.pause();
        this.delivering?.pause();
      }
      return;
    }
    if (this.settled) return;
    this.wire += chunk.length;
    if (this.wire > this.maxBytes) return this.cut(new AnswerTooLarge(this.maxBytes));
    const decoder = this.decoder;
    if (decoder === undefined) return this.hold(chunk);
    // The socket waits while the decoder is behind: compressed bytes never pile up.
    if (!decoder.write(chunk) && !c.paused) {
      c.pause();
      decoder.once('drain', () => {
        if (!this.settled) c.resume();
      });
    }
  }

  private hold(chunk: Buffer): void {
    if (this.settled) return;
    const broken = this.held.hold(chunk);
    if (broken !== undefined) this.cut(broken);
  }

  private ended(): void {
    if (this.streamed !== undefined) {
      // The node delivered it all; what the reader has yet to read is not the node's time.
      this.delivering?.stop();
      this.streamed.push(null);
      return;
    }
    if (this.settled) return;
    // An empty body has nothing to decode, whatever its Content-Encoding says.
    if (this.decoder !== undefined && this.wire > 0) this.decoder.end();
    else this.finish();
  }

  private finish(): void {
    if (this.settled) return;
    const body = this.held.joined();
    this.settle();
    this.resolve({ status: this.status, headers: this.headers, body });
  }

  private cut(reason: Error): void {
    if (this.settled) return;
    this.settle();
    if (this.controller !== undefined) this.controller.abort(reason);
    else this.cutShort = reason;
    this.reject(reason);
  }

  private failed(err: Error): void {
    if (this.streamed !== undefined) {
      this.streamed.destroy(err);
      return;
    }
    if (this.settled) return;
    this.settle();
    this.reject(err);
  }

  private settle(): void {
    this.settled = true;
    this.deadline.stop();
    this.limits.signal?.removeEventListener('abort', this.onAbort);
    this.held.release();
    this.decoder?.destroy();
  }
}

const EMPTY = Buffer.alloc(0);

/** A header's first value, when the node sent it more than once. */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
