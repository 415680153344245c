// The versions in a purge body are u64s read by the wire rule (api.md §2): a
// leading '+' and leading zeros of any length mean the same version, and the scope
// names the number.
import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import { purgeScopeOf } from '../../src/admin/purge-body.js';

const FAMILIES = new Set(['view', 'raw_item']);
const scopeOf = (body: unknown) => purgeScopeOf(Buffer.from(JSON.stringify(body)), FAMILIES);

describe('purge body versions', () => {
  it('leading zeros of any length name the same version', () => {
    expect(scopeOf({ family: 'view', fromVersion: `${'0'.repeat(40)}920`, toVersion: `${'0'.repeat(70)}960` })).toEqual(
      {
        scope: 'family',
        family: 'view',
        fromVersion: '920',
        toVersion: '960',
      },
    );
  });

  it('a leading + names the same version', () => {
    expect(scopeOf({ family: 'view', fromVersion: '+0920', toVersion: '+960' })).toEqual({
      scope: 'family',
      family: 'view',
      fromVersion: '920',
      toVersion: '960',
    });
  });

  it.each([`${'0'.repeat(40)}18446744073709551616`, '-920', '+', '++920', ''])('%j is not a version', (fromVersion) => {
    const scope = scopeOf({ family: 'view', fromVersion });
    expect(scope).toBeInstanceOf(NodeError);
    expect((scope as NodeError).message).toMatch(/"fromVersion" must be a u64/);
  });
});
