// The wait helpers of the suite: `until` polls a condition every 10 ms until it
// holds, `within` bounds a promise; both fail the test with what they were
// waiting for once timeoutMs passes. Tests wait for an event this way instead of
// sleeping a fixed time.

// Taken when this module loads: a test that fakes timers still gets real waits.
const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout } = globalThis;

/** What a wait is for; a function is read when the wait times out, to say how things stood then. */
export type Waited = string | (() => string);

function timedOut(timeoutMs: number, what: Waited): Error {
  return new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
}

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: Waited): Promise<void> {
  // performance.now, not Date.now: tests that fake Date still get a real deadline.
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (performance.now() >= deadline) throw timedOut(timeoutMs, what);
    await new Promise((r) => realSetTimeout(r, 10));
  }
}

/** Settles as `work` does, or rejects once timeoutMs passes first. */
export function within<T>(work: Promise<T>, timeoutMs: number, what: Waited): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(timedOut(timeoutMs, what)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => realClearTimeout(timer));
}
