// Addresses and hex bytes as the sim reads them, written apart from the proxy's
// wire/ (api/types: Address, and HexEncodedBytes):
// - an address follows the API contract (docs/api.md §2): "0x" then 1 to 64 hex
//   digits, left-padded with zeros ("0x" alone is no address), or exactly 64 hex
//   digits without the prefix. Digits in either case; "0X" is no prefix;
// - hex bytes drop one leading "0x", then take pairs of hex digits in either case.

const HEX_DIGIT = /^[0-9a-fA-F]*$/;

/** 0x + 64 lower-case digits, the form the sim keys its state by; null when the text is no address. */
export function parseNodeAddress(text: string): string | null {
  let digits: string;
  if (text.startsWith('0x') && text.length > 2 && text.length <= 66) digits = text.slice(2).padStart(64, '0');
  else if (text.length === 64) digits = text;
  else return null;
  return HEX_DIGIT.test(digits) ? '0x' + digits.toLowerCase() : null;
}

/** The 32 bytes of an address in the sim's form. */
export function simAddressBytes(address: string): Buffer {
  return Buffer.from(address.slice(2), 'hex');
}

/** Hex bytes (HexEncodedBytes), or null when a node refuses the text. */
export function parseNodeHexBytes(text: string): Buffer | null {
  const digits = text.startsWith('0x') ? text.slice(2) : text;
  if (digits.length % 2 !== 0 || !HEX_DIGIT.test(digits)) return null;
  return Buffer.from(digits, 'hex');
}

/** 0x and two lower-case digits per byte, as a node writes bytes in its messages and JSON. */
export function simHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
