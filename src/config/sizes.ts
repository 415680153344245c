// Sizes in bytes as an operator writes them: a whole number of bytes, or a number
// with an IEC binary unit (512KiB, 256MiB, 1.5GiB). Decimal units (KB, MB, GB)
// are refused rather than guessed: "MB" means 10^6 to some readers and 2^20 to
// others, and a memory bound read larger than its writer meant is a pod killed
// for its limit.

const UNITS = { KiB: 1024n, MiB: 1024n ** 2n, GiB: 1024n ** 3n } as const;

const SIZE = /^(?:[0-9]+|([0-9]+)(?:\.([0-9]+))? ?(KiB|MiB|GiB))$/;

/** What a size key accepts as a string (the JSON Schema carries it for editors). */
export const SIZE_PATTERN = SIZE.source;

export const SIZE_FORMS = 'a whole number of bytes, or a number with KiB, MiB or GiB (512KiB, 256MiB, 1.5GiB)';

/** Why `text` is not a size, or its bytes. A fraction is allowed with a unit when it comes to whole bytes. */
export function parseSize(text: string): { ok: true; bytes: number } | { ok: false; reason: string } {
  const match = SIZE.exec(text);
  if (match === null) {
    const decimal = /^[0-9.]+ ?[kKMGT]B$/.test(text);
    const hint = decimal ? ' (decimal units are not accepted: write KiB, MiB or GiB, which are 1024-based)' : '';
    return { ok: false, reason: `must be ${SIZE_FORMS}, got ${JSON.stringify(text)}${hint}` };
  }
  if (match[1] === undefined) return { ok: true, bytes: Number(text) };
  const fraction = match[2] ?? '';
  const unit = UNITS[match[3] as keyof typeof UNITS];
  const scaled = BigInt(match[1] + fraction) * unit;
  const scale = 10n ** BigInt(fraction.length);
  if (scaled % scale !== 0n)
    return { ok: false, reason: `must come to a whole number of bytes, got ${JSON.stringify(text)}` };
  return { ok: true, bytes: Number(scaled / scale) };
}

/** `bytes` in the largest binary unit that divides it (268435456 → 256MiB), or as a plain number. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of Object.entries(UNITS).reverse()) {
    if (bytes >= size && bytes % Number(size) === 0) return `${bytes / Number(size)}${unit}`;
  }
  return String(bytes);
}
