// A node's 404 for absent state names the version it read at, once, at the end of its
// message ("Table Item not found by Table handle(…), Table key(…) and Ledger
// version(N)": aptos-core api/src/response.rs, build_not_found). The same absence,
// judged unchanged at L, is what a node answers pinned at L: the same bytes with L in
// place of N. A body that does not name its own version exactly once is not judged.
import type { ReplayedAnswer, StoredAnswer } from '../model/read.js';

const MARK = Buffer.from('Ledger version(');

/** Where the stored answer's own version starts in its body; -1 when it is not named there exactly once. */
function versionAt(answer: StoredAnswer): number {
  const { body } = answer;
  const mark = body.indexOf(MARK);
  if (mark < 0 || body.indexOf(MARK, mark + 1) >= 0) return -1;
  const at = mark + MARK.length;
  const named = `${answer.version})`;
  return body.toString('latin1', at, at + named.length) === named ? at : -1;
}

/** Can the answer be restated at another version: a 200, or a 404 that names its own version once? */
export function restatable(answer: StoredAnswer): boolean {
  return answer.status === 200 || (answer.status === 404 && versionAt(answer) >= 0);
}

/** The answer a node gives at `latest` for state unchanged since `answer` was read; the answer itself for a 200. */
export function restatedAt(answer: StoredAnswer, latest: bigint): ReplayedAnswer {
  if (answer.status === 200 || latest === answer.version) return answer;
  const at = versionAt(answer);
  if (at < 0) throw new RangeError('restatedAt: the answer does not name its own version once');
  const { body } = answer;
  const end = at + String(answer.version).length;
  return {
    status: answer.status,
    contentType: answer.contentType,
    body: Buffer.concat([body.subarray(0, at), Buffer.from(String(latest), 'latin1'), body.subarray(end)]),
  };
}
