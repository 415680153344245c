// The answer format the sim picks from Accept. The sim follows the API contract
// (docs/api.md §3) here, as the proxy does: the first of application/json and
// application/x-bcs that appears wins, compared by media type alone (lower-case,
// parameters after ';' ignored, weights included); none, or no header: JSON.
// Content-Type is compared by its media type alone in the same way.

export type SimAnswerFormat = 'json' | 'bcs';

/** The format the sim answers in for this Accept header (Node.js joins repeated headers with ", "). */
export function simAnswerFormat(accept: string | undefined): SimAnswerFormat {
  if (accept === undefined) return 'json';
  for (const element of accept.split(',')) {
    const type = simMediaType(element);
    if (type === 'application/json') return 'json';
    if (type === 'application/x-bcs') return 'bcs';
  }
  return 'json';
}

/** A Content-Type's (or Accept element's) media type: lower-case, without parameters; '' when absent. */
export function simMediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}
