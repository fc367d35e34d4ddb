// A tool that prints a configured secret: the model, the transcript, the thread's events and
// the logs get `[secret]`, never the value. The engine masks through `maskOutput`, once, at
// the point a result is recorded; whatever path the result took to get there.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type EngineEvent, type Message } from '../../src/engine/index.js';
import { SecretMasker } from '../../src/secrets/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, memoryLogger, only } from '../support/engine-kit.js';

const API_KEY = 'e2e-openai-key-7f3a9c1d5b';
const STORE_PASSWORD = 'store-pass-42';
const masker = new SecretMasker([API_KEY, STORE_PASSWORD]);

/** `printenv`-like: prints the value of a setting, the way a careless `env` or `cat .env` would. */
const printSetting = defineTool({
  name: 'print_setting',
  description: 'print a setting',
  schema: z.object({ name: z.string() }),
  metadata: lowRisk,
  execute: async ({ name }) =>
    name === 'STORE_URL'
      ? {
          value: `redis://bot:${STORE_PASSWORD}@cache:6379`,
          _display: { summary: `STORE_URL=redis://bot:${STORE_PASSWORD}@cache:6379` },
        }
      : `${name}=${API_KEY}\n`,
});

const failingTool = defineTool({
  name: 'connect',
  description: 'connect to the store',
  schema: z.object({}),
  metadata: lowRisk,
  execute: async () => {
    throw new Error(`could not connect to redis://bot:${STORE_PASSWORD}@cache:6379 with key ${API_KEY}`);
  },
});

function everything(
  requests: unknown,
  messages: readonly Message[],
  transcript: Message[],
  events: EngineEvent[],
  logs: unknown,
): string {
  return JSON.stringify({ requests, messages, transcript, events, logs });
}

describe('a tool result that echoes a configured secret', () => {
  it('reaches the model, the history, the transcript, the events and the logs as [secret]', async () => {
    const transcript: Message[] = [];
    const logger = memoryLogger();
    const { engine, provider } = engineWith(
      [
        callTools(
          call('print_setting', { name: 'OPENAI_API_KEY' }, 'c1'),
          call('print_setting', { name: 'STORE_URL' }, 'c2'),
          call('connect', {}, 'c3'),
        ),
        say('Done.'),
      ],
      {
        tools: [printSetting, failingTool],
        ports: { maskOutput: masker.mask, logger },
        hooks: { onAppend: (message) => void transcript.push(structuredClone(message)) },
      },
    );
    const events = await collect(engine.run('show me the settings'));

    const all = everything(provider.requests, engine.messages, transcript, events, logger.lines);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(STORE_PASSWORD);

    // The model's next request holds the masked results, in the right places.
    const toolMessages = provider.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.content)).toEqual([
      'OPENAI_API_KEY=[secret]\n',
      JSON.stringify({ value: 'redis://bot:[secret]@cache:6379' }),
      expect.stringContaining('could not connect to redis://bot:[secret]@cache:6379 with key [secret]'),
    ]);
    // What the thread renders: the preview and the display sidecar.
    const finished = only(events, 'tool_finished');
    expect(finished.map((e) => e.resultPreview)).toEqual([
      'OPENAI_API_KEY=[secret]\\n',
      JSON.stringify({ value: 'redis://bot:[secret]@cache:6379' }),
      expect.stringContaining('[secret]'),
    ]);
    expect(finished[1]!.display).toEqual({ summary: 'STORE_URL=redis://bot:[secret]@cache:6379' });
    expect(finished[2]!.status).toBe('error');
    // The model's arguments are its own words, not rewritten.
    expect(only(events, 'tool_proposed')[0]!.arguments).toEqual({ name: 'OPENAI_API_KEY' });
  });

  it('an answer a person typed into ask_user (the interactive path) is masked the same way', async () => {
    const { engine, provider } = engineWith([callTools(call('ask_user', { question: 'which key?' })), say('Thanks.')], {
      ports: { maskOutput: masker.mask, interactive: { askUser: async () => ({ answer: `use ${API_KEY}` }) } },
    });
    const events = await collect(engine.run('deploy'));
    expect(JSON.stringify([provider.requests, engine.messages, events])).not.toContain(API_KEY);
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain('use [secret]');
  });

  it('a failed model call whose error quotes a secret shows the notice masked', async () => {
    const { engine } = engineWith(
      [{ failAfterChunks: 0, error: new Error(`401 from https://proxy:${STORE_PASSWORD}@llm.example`) }],
      { ports: { maskOutput: masker.mask } },
    );
    const events = await collect(engine.run('hello'));
    expect(only(events, 'error')[0]!.message).toContain('https://proxy:[secret]@llm.example');
    expect(JSON.stringify([engine.messages, events])).not.toContain(STORE_PASSWORD);
  });

  it("the model's answer streamed a few characters a delta: the deltas, the answer event and the history say [secret]", async () => {
    const { engine } = engineWith(
      [
        {
          text: `The key is ${API_KEY}, as base64 ${Buffer.from(API_KEY).toString('base64')}.`,
          reasoning: `I saw ${API_KEY} earlier`,
          chunkSize: 4,
        },
      ],
      {
        ports: { maskOutput: masker.mask, maskStream: masker.streamMask },
      },
    );
    const events = await collect(engine.run('what is the key?'));
    expect(
      only(events, 'assistant_delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('The key is [secret], as base64 [secret].');
    expect(
      only(events, 'reasoning_delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('I saw [secret] earlier');
    expect(only(events, 'assistant_message')[0]!.text).toBe('The key is [secret], as base64 [secret].');
    expect(JSON.stringify([engine.messages, events])).not.toContain(API_KEY);
  });

  it('an answer cut short with half a secret shown: the piece held back is masked when the stream fails, and history keeps what the thread saw', async () => {
    // 8 deltas of 3: `partial e2e-openai-key-7`, then the connection fails.
    const { engine } = engineWith(
      [{ text: `partial ${API_KEY} and more`, chunkSize: 3, failAfterChunks: 8, error: new Error('connection reset') }],
      {
        ports: { maskOutput: masker.mask, maskStream: masker.streamMask },
      },
    );
    const events = await collect(engine.run('go'));
    const shown = only(events, 'assistant_delta')
      .map((event) => event.text)
      .join('');
    expect(shown).toBe('partial [secret]');
    expect(engine.messages.find((message) => message.role === 'assistant')?.content).toBe('partial [secret]');
    expect(JSON.stringify([engine.messages, events])).not.toContain('e2e-openai');
  });

  it('without maskOutput, results are recorded exactly as the tool returned them', async () => {
    const { engine } = engineWith([callTools(call('print_setting', { name: 'OPENAI_API_KEY' })), say('ok')], {
      tools: [printSetting],
    });
    await collect(engine.run('show'));
    expect(engine.messages.find((m) => m.role === 'tool')!.content).toBe(`OPENAI_API_KEY=${API_KEY}\n`);
  });
});
