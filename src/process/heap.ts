// V8's heap, sized for one memory bound. By default V8 lets the old generation
// grow to up to four times what survived the last full collection before it
// collects again (on a machine with a large heap limit), and the ArrayBuffers of
// evicted answers wait for that collection too: under that default a proxy whose
// entries churn sits at twice its cache.memory.maxBytes and more, most of it
// garbage. Growing by at most a fifth keeps the garbage within the slope of the
// sizing rule (docs/operations/deploy.md, "Sizing memory"), which the memory bound
// (bench/memory-bound.mjs, entries churning) re-measures. Collections come more
// often only while entries churn (misses); hits promote almost nothing to the old
// generation.
import v8 from 'node:v8';

/** The old generation grows by at most this share of its live bytes before the next full collection. */
const HEAP_GROWING_PERCENT = 20;

const FLAG = '--heap-growing-percent';

/** Sets V8's heap growth for this process, unless node was started with the flag (`node --heap-growing-percent=N`). */
export function boundHeapGrowth(): void {
  if (process.execArgv.some((arg) => arg.replaceAll('_', '-').startsWith(FLAG))) return;
  // Read by V8 each time it sets the next collection's limit, so it applies from here on.
  v8.setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`);
}
