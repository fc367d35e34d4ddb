import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeltaCoalescer } from '../../connectors/shared/delta-coalescer.js';

/** A platform call we can hold open and settle when the scenario says so. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('DeltaCoalescer', () => {
  describe('with a fake clock', () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('sends the first token at once, then batches what follows into one flush per interval', async () => {
      const sent: string[] = [];
      const coalescer = new DeltaCoalescer({ flush: async (chunk) => void sent.push(chunk), minIntervalMs: 1000 });

      coalescer.push('Hel');
      expect(sent).toEqual(['Hel']);

      await vi.advanceTimersByTimeAsync(100);
      coalescer.push('lo');
      coalescer.push(', wor');
      await vi.advanceTimersByTimeAsync(500);
      coalescer.push('ld');
      expect(sent).toEqual(['Hel']);

      await vi.advanceTimersByTimeAsync(400);
      expect(sent).toEqual(['Hel', 'lo, world']);

      await vi.advanceTimersByTimeAsync(5000);
      expect(sent).toEqual(['Hel', 'lo, world']);
      await coalescer.close();
    });

    it('never runs two flushes at once: text pushed during a slow flush goes out in the next one', async () => {
      const calls: { chunk: string; done: ReturnType<typeof deferred> }[] = [];
      let running = 0;
      let maxRunning = 0;
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 100,
        flush: async (chunk) => {
          const done = deferred();
          calls.push({ chunk, done });
          running++;
          maxRunning = Math.max(maxRunning, running);
          await done.promise;
          running--;
        },
      });

      coalescer.push('a');
      await vi.advanceTimersByTimeAsync(50);
      coalescer.push('b');
      await vi.advanceTimersByTimeAsync(500); // the interval has long passed, but 'a' is still in flight
      coalescer.push('c');
      expect(calls.map((call) => call.chunk)).toEqual(['a']);

      calls[0]!.done.resolve();
      await vi.advanceTimersByTimeAsync(0);
      expect(calls.map((call) => call.chunk)).toEqual(['a', 'bc']);
      calls[1]!.done.resolve();
      await coalescer.close();
      expect(maxRunning).toBe(1);
    });

    it('drain before a tool card: pending text goes out at once and the in-flight flush is awaited', async () => {
      const sent: string[] = [];
      const first = deferred();
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 1000,
        flush: async (chunk) => {
          sent.push(chunk);
          if (sent.length === 1) await first.promise;
        },
      });
      coalescer.push('Let me check ');
      coalescer.push('the file.');

      let drained = false;
      const draining = coalescer.drain().then(() => {
        drained = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(drained).toBe(false); // still waiting for the first flush

      first.resolve();
      await draining;
      // No interval wait: the card must appear below the text now.
      expect(sent).toEqual(['Let me check ', 'the file.']);
      expect(coalescer.pendingText).toBe('');
      await coalescer.close();
    });

    it('a failed flush loses nothing: its text leads the next flush, and the error is reported', async () => {
      const sent: string[] = [];
      const errors: { message: string; chunk: string }[] = [];
      let failNext = true;
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 1000,
        flush: async (chunk) => {
          if (failNext) {
            failNext = false;
            throw new Error('message_not_in_streaming_state');
          }
          sent.push(chunk);
        },
        onError: (error, chunk) => errors.push({ message: (error as Error).message, chunk }),
      });

      coalescer.push('The answer ');
      await vi.advanceTimersByTimeAsync(0);
      expect(errors).toEqual([{ message: 'message_not_in_streaming_state', chunk: 'The answer ' }]);
      expect(coalescer.pendingText).toBe('The answer ');

      coalescer.push('is 42.');
      await vi.advanceTimersByTimeAsync(1000);
      expect(sent).toEqual(['The answer is 42.']);
      await coalescer.close();
    });

    it('a platform that keeps failing cannot hang drain or close; the text stays readable', async () => {
      const errors: unknown[] = [];
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 1000,
        flush: async () => {
          throw new Error('rate_limited');
        },
        onError: (error) => errors.push(error),
      });
      coalescer.push('first ');
      coalescer.push('second');
      await coalescer.close();
      expect(coalescer.pendingText).toBe('first second');
      expect(errors.length).toBeGreaterThanOrEqual(1);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('close flushes what is left, refuses later pushes and leaves no timer behind', async () => {
      const sent: string[] = [];
      const coalescer = new DeltaCoalescer({ flush: async (chunk) => void sent.push(chunk), minIntervalMs: 1000 });
      coalescer.push('a');
      coalescer.push('b');
      await vi.advanceTimersByTimeAsync(0);
      expect(vi.getTimerCount()).toBe(1); // 'b' waits for the interval

      await coalescer.close();

      expect(sent).toEqual(['a', 'b']);
      expect(vi.getTimerCount()).toBe(0);
      expect(coalescer.closed).toBe(true);
      expect(() => coalescer.push('late')).toThrow(/after close/);
      await coalescer.close(); // idempotent
    });

    it('an error handler that throws does not become an unhandled rejection', async () => {
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 10,
        flush: async () => {
          throw new Error('down');
        },
        onError: () => {
          throw new Error('logger broke');
        },
      });
      coalescer.push('x');
      await coalescer.close();
      expect(coalescer.pendingText).toBe('x');
    });
  });

  describe('with real time', () => {
    it('a burst of tokens over a few hundred milliseconds arrives whole, in order, in a handful of flushes', async () => {
      const sent: string[] = [];
      const coalescer = new DeltaCoalescer({
        minIntervalMs: 50,
        flush: async (chunk) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          sent.push(chunk);
        },
      });
      const tokens = Array.from({ length: 60 }, (_, i) => `t${i} `);
      const started = Date.now();
      for (const token of tokens) {
        coalescer.push(token);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await coalescer.close();
      const elapsed = Date.now() - started;

      expect(sent.join('')).toBe(tokens.join(''));
      // At most one flush per interval, plus the first and the final drain (generous on slow machines).
      expect(sent.length).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 2);
      expect(sent.length).toBeGreaterThan(1);
    });

    it('its timer does not keep the process alive', async () => {
      const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
      try {
        const coalescer = new DeltaCoalescer({ flush: async () => undefined, minIntervalMs: 60_000 });
        coalescer.push('first');
        await new Promise((resolve) => setImmediate(resolve));
        coalescer.push('waits for the interval');
        const timer = setTimeoutSpy.mock.results.at(-1)?.value as NodeJS.Timeout;
        expect(timer.hasRef()).toBe(false);
        void coalescer.close();
      } finally {
        setTimeoutSpy.mockRestore();
      }
    });

    it('rejects an interval that is not a non-negative number', () => {
      expect(() => new DeltaCoalescer({ flush: async () => undefined, minIntervalMs: -1 })).toThrow(RangeError);
      expect(() => new DeltaCoalescer({ flush: async () => undefined, minIntervalMs: Number.NaN })).toThrow(RangeError);
    });
  });
});
