import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ABORTED,
  defineTool,
  linkedAbortController,
  raceAbort,
  StopScope,
  type Compactor,
} from '../../src/engine/index.js';
import { bridgeStream } from '../../src/engine/stream-bridge.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, only, recordingTool, risky } from '../support/engine-kit.js';

/** Node warns (MaxListenersExceededWarning) once a signal holds more than 10 listeners. */
function watchListenerLeaks() {
  const leaks: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') leaks.push(warning.message);
  };
  process.on('warning', onWarning);
  return { leaks, stop: () => process.off('warning', onWarning) };
}

describe('the stream bridge', () => {
  it('a stop ends a stream that never sends its first token, even if the provider ignores its signal', async () => {
    const { engine, provider } = engineWith([say('never', { stallBeforeFirstToken: true, ignoreAbort: true })]);
    const events = await collect(engine.run('hello'), (event) => {
      if (event.type === 'turn_start') setTimeout(() => engine.requestInterrupt(), 5);
    });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });
    expect(engine.messages).toMatchObject([{ role: 'user' }, { role: 'notice', kind: 'interrupted' }]);
    // The provider request was aborted through its own signal (that is what closes the connection).
    expect(provider.signals[0]!.aborted).toBe(true);
  });

  it('a stop during a wedged stream keeps the text the user already saw', async () => {
    const { engine } = engineWith([
      say('first words and then silence', { chunkSize: 6, stallAfterChunks: 2, ignoreAbort: true }),
    ]);
    const events = await collect(engine.run('hello'), (event) => {
      if (event.type === 'assistant_delta' && event.text === 'words ') engine.requestInterrupt();
    });
    expect(only(events, 'interrupted')).toHaveLength(1);
    expect(engine.messages.slice(1)).toMatchObject([
      { role: 'assistant', content: 'first words ' },
      { role: 'notice', kind: 'interrupted' },
    ]);
  });

  it('releases every race: thousands of chunks on one signal leave no listener behind', async () => {
    const turn = new AbortController();
    const text = 'x'.repeat(5000);
    const provider = new ScriptedProvider([say(text, { chunkSize: 1 })]);
    let peak = 0;
    let chunks = 0;
    for await (const chunk of bridgeStream(provider, { model: 'm', messages: [], tools: [] }, turn.signal)) {
      chunks++;
      peak = Math.max(peak, getEventListeners(turn.signal, 'abort').length);
      void chunk;
    }
    expect(chunks).toBe(5001);
    // One listener links the request's own controller; each chunk's race adds and removes one.
    expect(peak).toBeLessThanOrEqual(2);
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('raceAbort releases its listener whichever side wins', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 5000; i++) {
      expect(await raceAbort(Promise.resolve(i), controller.signal)).toBe(i);
      await expect(raceAbort(Promise.reject(new Error('no')), controller.signal)).rejects.toThrow('no');
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const pending = raceAbort(new Promise<number>(() => undefined), controller.signal);
    controller.abort();
    expect(await pending).toBe(ABORTED);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a linked controller follows its parent until released', () => {
    const parent = new AbortController();
    const first = linkedAbortController(parent.signal);
    const second = linkedAbortController(parent.signal);
    second.release();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    parent.abort();
    expect(first.controller.signal.aborted).toBe(true);
    expect(second.controller.signal.aborted).toBe(false);
  });

  it('a stop scope races and links on one listener, and a stop ends every wait it holds', async () => {
    const turn = new AbortController();
    const stop = new StopScope(turn.signal);
    for (let i = 0; i < 1000; i++) {
      expect(await stop.race(Promise.resolve(i))).toBe(i);
      await expect(stop.race(Promise.reject(new Error('no')))).rejects.toThrow('no');
      stop.unlink(stop.link());
    }
    expect(stop.size).toBe(0);
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1);
    const pending = stop.race(new Promise<number>(() => undefined));
    const linked = stop.link();
    turn.abort(new Error('stopped'));
    expect(await pending).toBe(ABORTED);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toEqual(new Error('stopped'));
    expect(stop.size).toBe(0);
    // After the stop: a race is lost at once, a link is born aborted.
    expect(await stop.race(new Promise<number>(() => undefined))).toBe(ABORTED);
    expect(stop.link().signal.aborted).toBe(true);
  });

  it('a turn holds one listener on its signal, however many model calls, tools and tool signals race it', async () => {
    let turnSignal: AbortSignal | undefined;
    const held: number[] = [];
    // The checkpoint before each model call is given the turn's own signal.
    const compactor: Compactor = {
      isDue: (context) => {
        turnSignal ??= context.signal;
        held.push(getEventListeners(context.signal, 'abort').length);
        return false;
      },
      compact: async () => null,
    };
    const probe = defineTool({
      name: 'probe',
      description: 'looks at the turn while it runs',
      schema: z.object({ i: z.number() }),
      metadata: lowRisk,
      execute: async (_args, { signal }) => {
        expect(signal.aborted).toBe(false);
        held.push(getEventListeners(turnSignal!, 'abort').length);
        return 'seen';
      },
    });
    const steps: Step[] = [];
    for (let i = 0; i < 20; i++) steps.push(callTools(call('probe', { i }), call('probe', { i: i + 100 })));
    steps.push(say('done'));
    const { engine } = engineWith(steps, { tools: [probe], limits: { maxIterations: 30 }, ports: { compactor } });
    const events = await collect(engine.run('go'));
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: 21 });
    expect(only(events, 'tool_finished').filter((e) => e.status === 'ok')).toHaveLength(40);
    expect(held).toHaveLength(21 + 40);
    expect(Math.max(...held)).toBe(1);
  });

  it("a model call's signal is its own: handed out again only when the call left nothing listening to it", async () => {
    const steps = (): Step[] => [callTools(call('look', { i: 1 })), callTools(call('look', { i: 2 })), say('done')];
    const clean = engineWith(steps(), { tools: [recordingTool('look', lowRisk)] });
    await collect(clean.engine.run('go'));
    expect(new Set(clean.provider.signals).size).toBe(1);
    const leaky = new ScriptedProvider(steps(), { leakSignalListeners: true });
    const { engine } = engineWith([], { provider: leaky, tools: [recordingTool('look', lowRisk)] });
    await collect(engine.run('go'));
    expect(new Set(leaky.signals).size).toBe(3);
  });

  describe('on one long-lived engine', () => {
    let watcher: ReturnType<typeof watchListenerLeaks>;
    beforeEach(() => {
      watcher = watchListenerLeaks();
    });
    afterEach(() => watcher.stop());

    it('many model calls, approvals, questions and tools add no listener that outlives its race', async () => {
      const rounds = 300;
      const steps: Step[] = [];
      for (let i = 0; i < rounds; i++) {
        steps.push({
          ...callTools(call('look', { i }), call('write', { i }), call('ask_user', { question: `q${i}` })),
          text: 'abc',
          chunkSize: 1,
        });
      }
      steps.push(say('done'));
      // Like openai 6: the provider leaves a listener on every signal it is given.
      const provider = new ScriptedProvider(steps, { leakSignalListeners: true });
      const leakyTool = defineTool({
        name: 'write',
        description: 'a tool that forgets to remove its abort listener',
        schema: z.object({ i: z.number() }),
        metadata: risky,
        execute: async (_args, { signal }) => {
          signal.addEventListener('abort', () => undefined);
          return 'written';
        },
      });
      const { engine } = engineWith([], {
        provider,
        tools: [recordingTool('look', lowRisk), leakyTool],
        limits: { maxIterations: rounds + 1 },
        ports: {
          approver: async ({ signal }) => {
            signal.addEventListener('abort', () => undefined);
            return 'once';
          },
          interactive: { askUser: async ({ question }) => ({ answer: `answer to ${question}` }) },
        },
      });
      const events = await collect(engine.run('go'));
      expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed', iterations: rounds + 1 });
      expect(only(events, 'tool_finished').filter((e) => e.status === 'ok')).toHaveLength(rounds * 3);
      await new Promise((resolve) => setImmediate(resolve));
      expect(watcher.leaks).toEqual([]);
    });
  });
});
