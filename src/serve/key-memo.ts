// The cache keys of a pinned read, kept with the request object: the public entry
// reuses one parsed request per spelling, so a repeated hit builds no key, and the
// memory tier hashes a string whose hash V8 already holds.
import { cacheKeyText, sharedKey } from '../cache/key.js';
import type { ReadRequest } from '../model/read.js';

interface Keys {
  chain: number;
  generation: number;
  text: string;
  /** sharedKey(text), made on the first miss: a Redis hit then hashes nothing */
  shared: string | undefined;
}

export class KeyMemo {
  private readonly keys = new WeakMap<ReadRequest, Keys>();

  constructor(private readonly vendor: { readonly vendor: string }) {}

  /** The key text of a pinned read (at its own version, or a path route's) on `chain`, in cache generation `generation`. */
  text(req: ReadRequest, chain: number, generation: number): string {
    const known = this.keys.get(req);
    if (known !== undefined && known.chain === chain && known.generation === generation) return known.text;
    const text = cacheKeyText(this.vendor.vendor, chain, req, req.version, generation);
    this.keys.set(req, { chain, generation, text, shared: undefined });
    return text;
  }

  /** The shared-store key of `text`, req's key text. */
  shared(req: ReadRequest, text: string): string {
    const known = this.keys.get(req);
    if (known === undefined || known.text !== text) return sharedKey(text);
    return (known.shared ??= sharedKey(text));
  }
}
