import { describe, expect, it } from 'vitest';
import { Turns } from './waiters';

/** A promise and the function that resolves it: work that ends when the test says. */
function held(): { done: Promise<void>; release: () => void } {
  let release = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { done, release };
}

describe('Turns', () => {
  it('runs overlapping calls one at a time, in arrival order', async () => {
    const turns = new Turns();
    const log: string[] = [];
    const first = held();
    const calls = ['a', 'b', 'c'].map((name, i) =>
      turns.run(async () => {
        log.push(`${name} starts`);
        if (i === 0) await first.done;
        await Promise.resolve();
        log.push(`${name} ends`);
        return name;
      }, 10_000),
    );
    first.release();
    expect(await Promise.all(calls)).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a starts', 'a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
  });

  it('gives the turn on when a call fails, and drops a waiter that gave up', async () => {
    const turns = new Turns();
    const first = held();
    const failing = turns.run(async () => {
      await first.done;
      throw new Error('KV refused');
    }, 10_000);
    const impatient = turns.run(async () => 'never', 5);
    const patient = turns.run(async () => 'ran', 10_000);
    await expect(impatient).rejects.toThrow('no turn within 5 ms');
    first.release();
    await expect(failing).rejects.toThrow('KV refused');
    expect(await patient).toBe('ran');
  });
});
