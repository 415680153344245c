// A bounded wait: what a promise settles to, or a fallback once a time has passed
// first. The timer is cleared as soon as either comes, so a wait that ends early
// leaves nothing behind, and it is unref'd: a wait never holds the process open
// by itself (what it waits for does, if anything).

/** `work`'s outcome (its rejection too) if it settles within `ms`; `fallback` otherwise. */
export function settlesWithin<T, F>(work: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), Math.max(0, ms));
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
