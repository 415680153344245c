// api.md §2: an entry function id is {address}::{module}::{function}.
import { parseAddress } from './address.js';

/** Move identifiers: a letter, or an underscore followed by at least one more character. */
export const IDENTIFIER = /^(?:[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)$/;

export interface EntryFunctionId {
  /** canonical 0x + 64 lower-case digits */
  address: string;
  module: string;
  name: string;
}

export function parseEntryFunctionId(text: string): EntryFunctionId | null {
  const parts = text.split('::');
  if (parts.length !== 3) return null;
  const [addr, module, name] = parts;
  const address = parseAddress(addr);
  if (address === null || !IDENTIFIER.test(module) || !IDENTIFIER.test(name)) return null;
  return { address, module, name };
}

export function isIdentifier(text: string): boolean {
  return IDENTIFIER.test(text);
}
