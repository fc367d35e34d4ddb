// The demo model's script as a newcomer tries it: only a plain request for a command proposes
// one (a reply that happens to hold "cat", "run" or "command" does not), a reply that steers
// the answer visibly changes it (shorter, as a list, never mind), and each call reports what it
// used, estimated at four characters a token, so /usage and the footer count the demo's tokens.
import { describe, expect, it } from 'vitest';
import type { OutboundMessage, ProviderChunk, ProviderRequest, ToolSchema } from '../../src/engine/index.js';
import { DemoProvider } from '../../src/providers/demo-provider.js';
import { DEMO_STORY, DEMO_STORY_SHORT } from '../../src/providers/demo-script.js';

const TOOLS: ToolSchema[] = ['read_file', 'write_file', 'run_shell'].map((name) => ({
  name,
  description: name,
  parameters: { type: 'object' },
}));
const demo = new DemoProvider({ pauseMs: { normal: 0, slow: 0 } });

function request(messages: OutboundMessage[]): ProviderRequest {
  return {
    model: 'demo',
    messages: [{ role: 'system', content: 'You are a helpful bot.' }, ...messages],
    tools: TOOLS,
  };
}

async function answer(messages: OutboundMessage[]) {
  const chunks: ProviderChunk[] = [];
  for await (const chunk of demo.stream(request(messages), new AbortController().signal)) chunks.push(chunk);
  const final = chunks.at(-1);
  if (final?.type !== 'final') throw new Error('the stream did not end with a final chunk');
  return final.turn;
}

const user = (content: string): OutboundMessage => ({ role: 'user', content });
const said = (content: string): OutboundMessage => ({ role: 'assistant', content });
/** A reply sent while the long story was being written: the engine adds it after the story. */
const steering = (reply: string): OutboundMessage[] => [user('tell me a long story'), said(DEMO_STORY), user(reply)];

describe('the demo model proposes a command only when asked for one', () => {
  it.each([
    'concatenate these two lists for me',
    'I am running late, sorry',
    'what command did you use for that?',
    'the cat sat on the mat',
    "no, don't run any command",
    'do not run anything',
    'never run the shell without asking me',
  ])('"%s" is not a request for a command', async (text) => {
    const turn = await answer([user('hello'), said('Hi!'), user(text)]);
    expect(turn.toolCalls).toEqual([]);
    expect(turn.finishReason).toBe('stop');
  });

  it.each([
    'shell',
    'run a command',
    'please run the command',
    'run ls',
    'ls',
    'cat the note',
    'show it with a shell command',
    'Execute a shell command please',
  ])('"%s" is one', async (text) => {
    const turn = await answer([user('hello'), said('Hi!'), user(text)]);
    expect(turn.toolCalls.map((call) => call.name)).toEqual(['run_shell']);
  });

  it('a file is written only when asked for too: "don\'t write the file" proposes nothing', async () => {
    expect((await answer([user('hello'), said('Hi!'), user("no, don't write the file")])).toolCalls).toEqual([]);
    expect(
      (await answer([user('hello'), said('Hi!'), user('write a short note')])).toolCalls.map((call) => call.name),
    ).toEqual(['write_file']);
  });
});

describe('a reply that steers changes the answer', () => {
  it('"actually, make it short" while the story is written: the next answer is the story, short, and says so', async () => {
    const turn = await answer(steering('actually, make it short'));
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toMatch(/^Short version, as you asked \(“actually, make it short”\):/);
    expect(turn.text).toContain(DEMO_STORY_SHORT);
    expect(turn.text).not.toContain('Once upon a time, in a workspace not far from here');
  });

  it('"as a list": the last answer again, one point per sentence', async () => {
    const turn = await answer(steering('can you give it to me as a list?'));
    const points = (turn.text ?? '').split('\n').filter((line) => line.startsWith('- '));
    expect(points.length).toBeGreaterThanOrEqual(5);
    expect(points[0]).toBe('- Once upon a time, in a workspace not far from here, there lived a small bot.');
    expect(turn.text).toMatch(/^As a list, as you asked/);
  });

  it('"never mind": it leaves it there, and proposes nothing', async () => {
    const turn = await answer(steering('never mind, stop that'));
    expect(turn.text).toMatch(/^OK, I will leave it there/);
    expect(turn.toolCalls).toEqual([]);
  });

  it('"make the story short" is a steer, not a request for another long story', async () => {
    const turn = await answer(steering('make the story short'));
    expect(turn.text).toContain(DEMO_STORY_SHORT);
  });

  it('any other reply is quoted back, with the steers it knows', async () => {
    const turn = await answer(steering('and mention the weather'));
    expect(turn.text).toMatch(/^You said: “and mention the weather”\./);
    expect(turn.text).toMatch(/\*\*make it short\*\*/);
  });
});

describe('what a demo call used', () => {
  it('is reported with the answer: the request and the answer at four characters a token', async () => {
    const messages = [user('hello there, what can you do?')];
    const turn = await answer(messages);
    const sent = request(messages);
    const characters =
      sent.messages.reduce(
        (sum, message) => sum + (typeof message.content === 'string' ? message.content.length : 0),
        0,
      ) +
      TOOLS.reduce(
        (sum, tool) => sum + tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length,
        0,
      );
    expect(turn.usage?.input).toBe(Math.ceil(characters / 4) + sent.messages.length * 4);
    expect(turn.usage?.output).toBe(Math.ceil((turn.text ?? '').length / 4));
    // A proposal's call counts as output too.
    const proposal = await answer([user('shell')]);
    expect(proposal.usage?.output).toBe(
      Math.ceil(((proposal.text ?? '').length + 'run_shell'.length + proposal.toolCalls[0]!.arguments.length) / 4),
    );
  });
});
