// One HTTP exchange with a node through undici's dispatch API: the answer's
// status, headers and whole body, or the transport's error. request() wraps the
// same dispatch in a body stream and an AbortSignal per call, which were about a
// tenth of a forwarded read's CPU; a node's answer is read whole anyway.
import type { Dispatcher } from 'undici';

export interface Exchanged {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** an exact-size copy: a cached answer never keeps a socket's or the pool's buffer alive */
  body: Buffer;
}

/** Raised when the exchange ran out of time; the caller says so in its own words. */
export class ExchangeTimeout extends Error {
  constructor() {
    super('timed out');
    this.name = 'ExchangeTimeout';
  }
}

/** The part of undici's handler controller used here. */
interface Controller {
  abort(reason: Error): void;
}

/**
 * Sends `options` on `dispatcher` and collects the answer. Rejects after
 * `timeoutMs` with ExchangeTimeout (the whole exchange, queueing included), or
 * with the reason `signal` is aborted with (a hedge that lost), the exchange
 * itself aborted either way.
 */
export function exchange(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, timeoutMs: number, signal?: AbortSignal): Promise<Exchanged> {
  return new Promise<Exchanged>((resolve, reject) => {
    let controller: Controller | undefined;
    /** why the exchange was cut short before undici handed over its controller */
    let cutShort: Error | undefined;
    let settled = false;
    let status = 0;
    let headers: Exchanged['headers'] = {};
    // Nearly every answer arrives in one chunk: a list is made only for a second one.
    let first: Buffer | undefined;
    let rest: Buffer[] | undefined;
    let size = 0;

    const done = (): void => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const cut = (reason: Error): void => {
      if (settled) return;
      done();
      if (controller !== undefined) controller.abort(reason);
      else cutShort = reason;
      reject(reason);
    };
    const timer = setTimeout(() => cut(new ExchangeTimeout()), timeoutMs);
    const onAbort = (): void => cut(signal!.reason instanceof Error ? signal!.reason : new Error('request aborted'));
    if (signal !== undefined) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }

    dispatcher.dispatch(options, {
      onRequestStart(c: Controller) {
        controller = c;
        if (cutShort !== undefined) c.abort(cutShort);
      },
      onResponseStart(_c: Controller, statusCode: number, answerHeaders: Exchanged['headers']) {
        status = statusCode;
        headers = answerHeaders;
      },
      onResponseData(_c: Controller, chunk: Buffer) {
        if (first === undefined) first = chunk;
        else (rest ??= [first]).push(chunk);
        size += chunk.length;
      },
      onResponseEnd() {
        if (settled) return;
        done();
        const body = Buffer.allocUnsafeSlow(size);
        let at = 0;
        for (const chunk of rest ?? (first === undefined ? [] : [first])) at += chunk.copy(body, at);
        resolve({ status, headers, body });
      },
      onResponseError(_c: Controller, err: Error) {
        if (settled) return;
        done();
        reject(err);
      },
    } as Dispatcher.DispatchHandler);
  });
}
