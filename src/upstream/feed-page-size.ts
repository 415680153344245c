// How many versions the change feed's next page asks for, after a page taken. A version
// this reader cannot walk is delimited by hash, and each such search hashes the rest of
// its page (writes/delimit.ts): a page's searches cost about its delimited versions
// times half its bytes, which grows with the square of the page. Pages are kept to about
// SEARCH_BYTES_PER_PAGE of that work, so that a new kind of transaction on many versions
// costs smaller pages, not the event loop's time for a whole page of searches; otherwise
// the page doubles back, up to latest.changeFeed.pageSize.

/** A version as the follower sees it: delimited when its end, or its events' end, was found by hash. */
export interface FeedVersion {
  readonly version: bigint;
  readonly delimited?: boolean;
}

/** The searches' work a page may cost, in bytes hashed: about ten milliseconds of one core. */
const SEARCH_BYTES_PER_PAGE = 4 * 1024 * 1024;

/** The next page's size after one of `limit` versions asked, whose `versions` were taken from `bytes`. */
export function nextPageLimit(
  limit: number,
  pageSize: number,
  versions: readonly FeedVersion[],
  bytes: number,
): number {
  let delimited = 0;
  for (const v of versions) if (v.delimited === true) delimited++;
  const work = (delimited * bytes) / 2;
  if (work > SEARCH_BYTES_PER_PAGE) return Math.max(1, Math.ceil(limit / 2));
  // Within a quarter of the bound, a page twice the size could pass it.
  if (work * 4 > SEARCH_BYTES_PER_PAGE) return Math.min(pageSize, limit);
  return Math.min(pageSize, limit * 2);
}
