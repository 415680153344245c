// How a Redis client's failure is reported: counted every time, logged at most
// once per interval under `err` (pino's serialized error: type, message, code),
// the stack's frames only at debug.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RedisFailures } from '../../src/cache/redis/failures.js';

function refused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
}

function reporter(level: string) {
  const lines: Array<Record<string, any>> = [];
  const counted: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const failures = new RedisFailures('limits', logger, (op, _err, client) => counted.push(`${client} ${op}`));
  return { failures, lines, counted };
}

describe('RedisFailures', () => {
  it('counts every failure and logs one warn line per outage, with message and code and no stack', () => {
    const { failures, lines, counted } = reporter('info');
    for (let i = 0; i < 5; i++) failures.fail('connection', refused());
    expect(counted).toEqual(Array(5).fill('limits connection'));
    const warns = lines.filter((l) => l.level === 40);
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      client: 'limits',
      op: 'connection',
      err: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' },
    });
    expect(warns[0].err.stack).toBe('Error: connect ECONNREFUSED 127.0.0.1:1');
    expect(warns[0]).not.toHaveProperty('error');
    expect(JSON.stringify(lines)).not.toContain('at ');

    failures.recovered();
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'redis available again', suppressed: 4 });
    failures.fail('get', new Error('Command timed out after 5 ms'));
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
  });

  it("adds the stack's frames at debug", () => {
    const { failures, lines } = reporter('debug');
    failures.fail('connection', refused());
    expect(lines[0].err.stack).toMatch(/^Error: connect ECONNREFUSED 127\.0\.0\.1:1\n\s+at /);
  });

  it("remembers when each node failed: a node's failure counts against it alone, the whole client's against every node", () => {
    const { failures, lines } = reporter('info');
    expect(failures.failedAt('10.0.0.1:6379')).toBe(-Infinity);
    failures.fail('get', new Error('Command timed out after 5 ms'), '10.0.0.1:6379');
    const first = failures.failedAt('10.0.0.1:6379');
    expect(first).toBeGreaterThan(-Infinity);
    expect(failures.lastFailureAt).toBe(first);
    expect(failures.failedAt('10.0.0.2:6379')).toBe(-Infinity);
    expect(lines[0]).toMatchObject({ op: 'get', node: '10.0.0.1:6379' });

    failures.fail('connection', refused());
    expect(failures.failedAt('10.0.0.2:6379')).toBe(failures.lastFailureAt);
    expect(failures.failedAt('10.0.0.1:6379')).toBe(failures.lastFailureAt);
  });

  it('says nothing of a closed client', () => {
    const { failures, lines, counted } = reporter('info');
    failures.close();
    failures.fail('connection', refused());
    expect(lines).toEqual([]);
    expect(counted).toEqual([]);
  });
});
