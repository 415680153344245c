// api.md §2: hex bytes are "0x" (optional on input) then two hex digits per byte, either case.

const HEX = /^(?:0x)?((?:[0-9a-fA-F]{2})*)$/;

/** Parses hex bytes; null when the text is not whole bytes of hex. */
export function parseHexBytes(text: string): Buffer | null {
  const match = HEX.exec(text);
  if (match === null) return null;
  return Buffer.from(match[1], 'hex');
}

export function toHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
