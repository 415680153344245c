// What the change feed says of a stored latest answer at the newest version known
// (freshness/judge.ts gives it; the latest read path acts on it and counts it).

/**
 * The feed's judgement of a stored answer at the newest version: unchanged, or why
 * not (the same words name why a covered read was forwarded; not_stored: there was
 * no answer to judge).
 * - written: a version since the answer wrote what it reads
 * - unjudged: the answer cannot be judged (neither a 200 nor a 404 that names its version once, or the route cannot tell what it reads)
 * - behind: the feed has not verified the newest version yet
 * - stopped: the feed covers nothing (stopped, or not yet started)
 */
export type FeedVerdict = 'unchanged' | 'written' | 'unjudged' | 'behind' | 'stopped';

/** Why a latest read of a route the feed covers went to a node: the verdict, or no stored answer to judge. */
export type FeedForwardReason = Exclude<FeedVerdict, 'unchanged'> | 'not_stored';
