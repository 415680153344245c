// api.md §2: table handles and account addresses. With 0x: 1 to 64 hex digits (short
// forms are left-zero-padded); without 0x: exactly 64. Canonical form: 0x + 64 lower-case.

const WITH_PREFIX = /^0x([0-9a-fA-F]{1,64})$/;
const WITHOUT_PREFIX = /^([0-9a-fA-F]{64})$/;

/** The canonical 0x + 64 lower-case digits form, or null when the text is no address. */
export function parseAddress(text: string): string | null {
  const match = WITH_PREFIX.exec(text) ?? WITHOUT_PREFIX.exec(text);
  if (match === null) return null;
  return '0x' + match[1].toLowerCase().padStart(64, '0');
}

/** The 32 bytes of a canonical address. */
export function addressBytes(canonical: string): Buffer {
  return Buffer.from(canonical.slice(2), 'hex');
}
