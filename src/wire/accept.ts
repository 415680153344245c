// api.md §3: the first of application/json and application/x-bcs that appears in Accept
// wins; parameters after ';' are ignored; anything else (or nothing) means JSON.
import { mediaType } from './media-type.js';

export type AnswerFormat = 'json' | 'bcs';

export function acceptFormat(accept: string | undefined): AnswerFormat {
  if (accept === undefined) return 'json';
  // The two values SDKs send, without the split (a hot path).
  if (accept === 'application/x-bcs') return 'bcs';
  if (accept === 'application/json') return 'json';
  for (const part of accept.split(',')) {
    const type = mediaType(part);
    if (type === 'application/json') return 'json';
    if (type === 'application/x-bcs') return 'bcs';
  }
  return 'json';
}
