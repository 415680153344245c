// Pausing this process as a GC pause or CPU contention would: a busy loop, at a
// chosen moment of a node call. undici publishes each request it creates
// (diagnostics channel 'undici:request:create') before it has a connection for it
// or writes it, so a pause there falls between the call and the write.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach } from 'vitest';

const CREATED = 'undici:request:create';
const subscribed: Array<(message: unknown) => void> = [];
afterEach(() => {
  while (subscribed.length > 0) unsubscribe(CREATED, subscribed.pop()!);
});

/** Blocks the event loop for `ms`: no timer, no I/O runs meanwhile. */
export function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // paused
  }
}

/**
 * Pauses the process for `ms`, once, when the next call to `origin` whose path
 * matches is made, before undici writes it. `paused()`: whether it happened.
 */
export function pauseBeforeWrite(origin: string, path: RegExp, ms: number): { paused: () => boolean } {
  let paused = false;
  const onCreate = (message: unknown): void => {
    const { request } = message as { request: { origin: string; path: string } };
    if (paused || request.origin !== new URL(origin).origin || !path.test(request.path)) return;
    paused = true;
    busyFor(ms);
  };
  subscribe(CREATED, onCreate);
  subscribed.push(onCreate);
  return { paused: () => paused };
}
