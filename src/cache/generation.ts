// The cache generation: part of every key (key.ts). A purge of everything moves it
// on, so no entry of an earlier generation is looked up again: Redis needs no scan,
// and an answer a read fetched before the purge is stored where nobody looks.
// With Redis, the generation lives there (purge-channel.ts) and every process
// follows it; without, each process keeps its own.

export class CacheGeneration {
  #current = 0;

  /** Read on every key made: a plain field, no lookup. */
  get current(): number {
    return this.#current;
  }

  /** Moves to `generation` when it is newer; false when it is not (nothing changes). */
  advance(generation: number): boolean {
    if (!(generation > this.#current)) return false;
    this.#current = generation;
    return true;
  }
}
