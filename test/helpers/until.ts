// The one wait helper of the suite: polls a condition every 10 ms until it holds,
// and fails the test with what it was waiting for once timeoutMs passes. Tests
// wait for an event this way instead of sleeping a fixed time.

export async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  // performance.now, not Date.now: tests that fake Date still get a real deadline.
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (performance.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
