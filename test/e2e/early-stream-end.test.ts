// A compatible server's body that ends cleanly before the answer is finished (a proxy or load
// balancer closing early: no finish_reason, no [DONE], no socket error), lived through the
// engine, the real OpenAI provider and the real SDK against FakeOpenAI: the turn ends as a
// failed answer (what was shown kept, an error notice, Retry offered), never as a complete
// one, and a tool call cut off mid-stream never runs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, TurnEngine, type Message } from '../../src/engine/index.js';
import { OpenAIProvider } from '../../src/providers/openai.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { collect, only } from '../support/engine-kit.js';

let fake: FakeOpenAI;
let deployed: string[];

beforeEach(async () => {
  fake = await new FakeOpenAI().start();
  deployed = [];
});

afterEach(async () => {
  await fake.stop();
});

function engine(): TurnEngine {
  return new TurnEngine({
    provider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 }),
    model: 'openai:mistral-large-latest',
    sessionId: 's1',
    tools: [
      defineTool({
        name: 'deploy',
        description: 'Deploy the app',
        schema: z.object({ app: z.string() }).partial(),
        metadata: { risk: 'low', category: 'external' },
        async execute({ app }) {
          deployed.push(app ?? '(no app)');
          return `deployed ${app ?? 'nothing'}`;
        },
      }),
    ],
  });
}

/** The last messages of a history, minus their timestamps. */
function tail(messages: readonly Message[], count: number): unknown[] {
  return messages.slice(-count).map((message) => {
    const { ts: _ts, ...rest } = message;
    return rest;
  });
}

describe('a stream that ends cleanly before its finish_reason', () => {
  it('mid tool call: the call never runs, the turn ends in an error notice, and Retry runs it once', async () => {
    // Role chunk, the text in two pieces, the call's opening piece (id, name, arguments ""):
    // then the body ends. The schema accepts `{}`, so only the completeness check stands
    // between this half call and a deploy of nothing.
    fake.replyCleanEnd(4, {
      text: 'Deploying now.',
      toolCalls: [{ id: 'call_d1', name: 'deploy', arguments: { app: 'api' } }],
    });
    const session = engine();
    const events = await collect(session.run('Deploy the api'));

    expect(deployed).toEqual([]);
    expect(only(events, 'tool_started')).toEqual([]);
    expect(only(events, 'error')).toEqual([
      {
        type: 'error',
        errorKind: 'connection',
        message: expect.stringMatching(/ended before the answer was complete\. Try again\.$/) as unknown,
      },
    ]);
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'error' }]);
    expect(tail(session.messages, 2)).toEqual([
      { role: 'assistant', content: 'Deploying now.' },
      { role: 'notice', kind: 'error', text: expect.stringMatching(/ended before the answer was complete/) as unknown },
    ]);
    expect(session.canRetry()).toBe(true);

    fake.replyToolCalls([{ id: 'call_d2', name: 'deploy', arguments: { app: 'api' } }]);
    fake.replyText('Deployed.');
    const retried = await collect(session.retry());
    expect(only(retried, 'turn_end')).toMatchObject([{ status: 'completed' }]);
    expect(deployed).toEqual(['api']);
  });

  it('mid text: the turn ends as an error with the partial text kept, not as completed', async () => {
    fake.replyCleanEnd(3, { text: 'Capital of France is Paris.', chunkSize: 5 });
    const session = engine();
    const events = await collect(session.run('Capital of France?'));

    expect(
      only(events, 'assistant_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Capital of');
    expect(only(events, 'assistant_message')).toEqual([]);
    expect(only(events, 'turn_end')).toMatchObject([{ status: 'error' }]);
    expect(tail(session.messages, 2)).toEqual([
      { role: 'assistant', content: 'Capital of' },
      { role: 'notice', kind: 'error', text: expect.stringMatching(/ended before the answer was complete/) as unknown },
    ]);
    expect(session.canRetry()).toBe(true);
  });
});
