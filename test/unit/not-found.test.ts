// A 404 for absent state names the version it was read at: judged unchanged at L, it is
// restated with L, and only when its body names its own version exactly once.
import { describe, expect, it } from 'vitest';
import { restatable, restatedAt } from '../../src/freshness/not-found.js';
import type { StoredAnswer } from '../../src/model/read.js';

const notFound = (message: string, version = 2004n): StoredAnswer => ({
  status: 404,
  contentType: 'application/json',
  body: Buffer.from(JSON.stringify({ message, error_code: 'table_item_not_found', vm_error_code: null })),
  version,
});
const TABLE_ITEM = 'Table Item not found by Table handle(0x1), Table key(0x02) and Ledger version(2004)';

describe('a 404 restated at another version', () => {
  it('names the new version where the old one was, and nothing else changes', () => {
    const restated = restatedAt(notFound(TABLE_ITEM), 123456n);
    expect(restated.body.toString()).toBe(notFound(TABLE_ITEM.replace('(2004)', '(123456)')).body.toString());
    expect([restated.status, restated.contentType]).toEqual([404, 'application/json']);
  });

  it('is the answer itself at its own version, and for a 200', () => {
    const answer = notFound(TABLE_ITEM);
    expect(restatedAt(answer, 2004n)).toBe(answer);
    const ok = { ...answer, status: 200, body: Buffer.from('Ledger version(1) Ledger version(1)') };
    expect(restatable(ok)).toBe(true);
    expect(restatedAt(ok, 9n)).toBe(ok);
  });

  it.each([
    ['another version', TABLE_ITEM.replace('(2004)', '(2003)')],
    ['a version that only starts with its own', TABLE_ITEM.replace('(2004)', '(20045)')],
    ['no version', 'Table Item not found'],
    ['two versions', `${TABLE_ITEM}, Ledger version(2004)`],
    ['the mark twice', `Table key(Ledger version() and ${TABLE_ITEM}`],
  ])('is refused when the body names %s', (_, message) => {
    const answer = notFound(message);
    expect(restatable(answer)).toBe(false);
    expect(() => restatedAt(answer, 2010n)).toThrow(RangeError);
  });

  it('refuses any other error answer', () => {
    expect(restatable({ ...notFound(TABLE_ITEM), status: 410 })).toBe(false);
  });
});
