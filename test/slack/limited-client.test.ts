import { describe, expect, it } from 'vitest';
import type { WebClient } from '@slack/web-api';
import { limitClient, Semaphore } from '../../connectors/slack/limited-client.js';

/** A stand-in with the WebClient's shape: nested groups of async methods (not the SDK: the wrapper is what is tested). */
function slowClient(log: { inFlight: number; max: number; order: string[] }) {
  const call = (name: string) => async (args: { n: number }) => {
    log.inFlight++;
    log.max = Math.max(log.max, log.inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.inFlight--;
    log.order.push(`${name}:${args.n}`);
    return { ok: true, n: args.n };
  };
  return {
    chat: { postMessage: call('post'), update: call('update') },
    assistant: { threads: { setStatus: call('status') } },
    token: 'xoxb-1',
  } as unknown as WebClient;
}

describe("a thread's limited Slack client", () => {
  it('keeps at most N calls in flight across every method, in call order, and returns their answers', async () => {
    const log = { inFlight: 0, max: 0, order: [] as string[] };
    const client = limitClient(slowClient(log), 3);
    const calls = Array.from({ length: 30 }, (_unused, n) =>
      n % 3 === 0
        ? client.chat.postMessage({ n } as never)
        : n % 3 === 1
          ? client.chat.update({ n } as never)
          : client.assistant.threads.setStatus({ n } as never),
    );
    const answers = await Promise.all(calls);
    expect(log.max).toBe(3);
    expect(answers.map((answer) => (answer as unknown as { n: number }).n)).toEqual(
      Array.from({ length: 30 }, (_unused, n) => n),
    );
    expect(client.token).toBe('xoxb-1');
  });

  it('a failing call frees its slot', async () => {
    const gate = new Semaphore(1);
    await expect(gate.run(() => Promise.reject(new Error('429')))).rejects.toThrow('429');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
    expect(gate.load).toEqual({ active: 0, waiting: 0 });
  });
});
