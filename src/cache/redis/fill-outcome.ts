// The message a filler publishes to the instances waiting for its fill: one byte
// for what it is, then (for an answer) the answer in the entry format, so a
// relayed answer is checked as an entry read from Redis is.
import { decodeAnswer, encodeAnswer } from './codec.js';
import type { FillOutcome } from '../store.js';

const OUTCOME_GAVE_UP = 0;
const OUTCOME_ONE_OFF = 1;
const OUTCOME_STORED = 2;

export const GAVE_UP_MESSAGE = Buffer.of(OUTCOME_GAVE_UP);

/** Throws RangeError for an answer the entry format cannot hold. */
export function encodeOutcome(outcome: FillOutcome): Buffer {
  if (outcome === 'gave-up') return GAVE_UP_MESSAGE;
  return Buffer.concat([Buffer.of(outcome.stored ? OUTCOME_STORED : OUTCOME_ONE_OFF), encodeAnswer(outcome.answer)]);
}

/** An outcome this release cannot read counts as given up: the waiter asks a node. */
export function decodeOutcome(message: Buffer): FillOutcome {
  const kind = message[0];
  if (kind !== OUTCOME_ONE_OFF && kind !== OUTCOME_STORED) return 'gave-up';
  const answer = decodeAnswer(message.subarray(1));
  return answer === undefined ? 'gave-up' : { answer, stored: kind === OUTCOME_STORED };
}
