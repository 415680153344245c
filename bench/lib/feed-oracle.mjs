// Scenario 4d's exact oracle: how many of the covered latest reads any exact proxy
// could have answered without a node, given the same reads, the versions their
// replies carry and the sim's writes. A read of key K answered at version L could
// be when an earlier read of K was at a version A ≤ L and no version in (A, L] wrote K
// (its answer then is the same 200, or the same 404 with L in its message).
// An answer served from the feed is exactly such a read, so what the proxy answered
// divided by this is how close it comes to what exactness allows.
import { SimSparseModel } from '../../dist/sim/index.js';

/**
 * `history` (reads before the measured ones, counted for what they store) and
 * `observed` (the measured ones): walletWrites' [form, rank, ledger version, status,
 * X-Cache]. Returns, of the observed reads, how many the oracle could answer and how
 * many the proxy answered (X-Cache: HIT), counted over the same replies.
 */
export function exactlyAnswerable(simWrites, history, observed) {
  const model = new SimSparseModel(simWrites);
  const { universe } = model;
  const keys = new Map(universe.keys.map((k) => [`${k.kind} ${k.owner} ${k.detail}`, k]));
  const keyOf = (form, rank) =>
    form === 'raw_item'
      ? keys.get(`table_item ${universe.tables[rank % universe.tables.length]} ${rank % universe.tableKeys}`)
      : keys.get(`${form} ${universe.accounts[rank]} 0`);
  /** per key, the newest version a reply of it carried */
  const newest = new Map();
  const judge = ([form, rank, versionText, status]) => {
    const key = keyOf(form, rank);
    if (key === undefined) throw new Error(`feed oracle: no universe key for ${form} ${rank}`);
    if (versionText === null) return false;
    const version = BigInt(versionText);
    const read = newest.get(key.index);
    if (read === undefined || version > read) newest.set(key.index, version);
    if ((status !== 200 && status !== 404) || read === undefined || read > version) return false;
    const written = model.lastWriteAt(key, version);
    return written === null || written <= read;
  };
  for (const read of history) judge(read);
  let answerable = 0;
  let answered = 0;
  for (const read of observed) {
    if (judge(read)) answerable++;
    if (read[4] === 'HIT') answered++;
  }
  return { reads: observed.length, answerable, answered };
}
