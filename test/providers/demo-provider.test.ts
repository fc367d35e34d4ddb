// The built-in demo model (MODEL=demo) as the engine meets it: a provider that streams a
// scripted answer in small pieces, keyed on what the person wrote last, proposes a write and a
// command for approval, answers a reply that arrived mid-turn, and stops the moment its signal
// is aborted. The names around it: `demo` resolves to it, needs no key, has sane capabilities.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { OutboundMessage, ProviderChunk, ProviderRequest, ToolSchema } from '../../src/engine/index.js';
import { checkModels } from '../../src/app/doctor.js';
import { capabilitiesOf } from '../../src/providers/capabilities.js';
import { DemoProvider } from '../../src/providers/demo-provider.js';
import { DEMO_NOTE_CONTENT, DEMO_NOTE_PATH } from '../../src/providers/demo-script.js';
import { userContentWithFiles } from '../../src/files/user-turn.js';
import { createProviderResolver, resolveModelRef } from '../../src/providers/index.js';
import { formatModelRef, isDemoModel } from '../../src/providers/model-ref.js';

const TOOLS: ToolSchema[] = ['read_file', 'write_file', 'run_shell'].map((name) => ({
  name,
  description: name,
  parameters: { type: 'object' },
}));
// Fast in the test runner; the real pace is for a person watching.
const demo = new DemoProvider({ pauseMs: { normal: 0, slow: 0 } });

function request(messages: OutboundMessage[], tools: ToolSchema[] = TOOLS): ProviderRequest {
  return { model: 'demo', messages: [{ role: 'system', content: 'You are a helpful bot.' }, ...messages], tools };
}

async function collect(
  req: ProviderRequest,
  signal = new AbortController().signal,
  provider = demo,
): Promise<ProviderChunk[]> {
  const chunks: ProviderChunk[] = [];
  for await (const chunk of provider.stream(req, signal)) chunks.push(chunk);
  return chunks;
}

async function answer(messages: OutboundMessage[], tools?: ToolSchema[]) {
  const chunks = await collect(request(messages, tools));
  const final = chunks.at(-1);
  if (final?.type !== 'final') throw new Error('the stream did not end with a final chunk');
  const deltas = chunks.filter(
    (chunk): chunk is Extract<ProviderChunk, { type: 'text_delta' }> => chunk.type === 'text_delta',
  );
  return { turn: final.turn, deltas: deltas.map((delta) => delta.text) };
}

const user = (content: string): OutboundMessage => ({ role: 'user', content });
const said = (content: string): OutboundMessage => ({ role: 'assistant', content });
const call = (id: string, name: string, args: Record<string, unknown>): OutboundMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id: string, content: unknown): OutboundMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: JSON.stringify(content),
});

describe('the demo model', () => {
  it('files shared with a message (the user turn the files room writes): it says where they are and offers to post the first back with attach_file, not its note', async () => {
    const stored = (path: string, name: string, mimeType: string, kind: 'text' | 'image') => ({
      path,
      name,
      mimeType,
      size: 40,
      kind,
    });
    const content = userContentWithFiles('hello', {
      stored: [
        stored('uploads/cities.csv', 'cities.csv', 'text/csv', 'text'),
        stored('uploads/screen shot.png', 'screen shot.png', 'image/png', 'image'),
      ],
      problems: ['big.zip: not fetched: it is over the 20 MB one file may be (MAX_FILE_BYTES)'],
      missing: ['big.zip: not fetched: it is over the 20 MB one file may be (MAX_FILE_BYTES)'],
    });
    const tools = [...TOOLS, { name: 'attach_file', description: 'attach_file', parameters: { type: 'object' } }];
    const { turn } = await answer([{ role: 'user', content }], tools);
    expect(turn.text).toContain(
      'You shared `uploads/cities.csv`, `uploads/screen shot.png`: they are saved in the workspace.',
    );
    expect(turn.toolCalls.map((toolCall) => [toolCall.name, JSON.parse(toolCall.arguments) as unknown])).toEqual([
      ['attach_file', { path: 'uploads/cities.csv', comment: 'Your file, back from the demo model.' }],
    ]);
    const posted = await answer(
      [
        { role: 'user', content },
        call('c1', 'attach_file', { path: 'uploads/cities.csv' }),
        result('c1', { posted: 'uploads/cities.csv', link: 'http://127.0.0.1/api/files/x' }),
      ],
      tools,
    );
    expect(posted.turn.text).toMatch(/^Posted: the file is in the thread above/);
    // Without attach_file offered, it says where they are and what to try; the list's "Files" is not a request for the note.
    const { turn: plain } = await answer([{ role: 'user', content }]);
    expect(plain.toolCalls).toEqual([]);
    expect(plain.text).toContain('You shared');
  });

  it('answers a greeting with what to try, streamed in small pieces that add up to the whole answer', async () => {
    const { turn, deltas } = await answer([user('hello\n\n<system-context>\nnow: 2026-01-01\n</system-context>')]);
    expect(turn.finishReason).toBe('stop');
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toContain('demo model');
    expect(turn.text).toMatch(/scripted answers, no AI/);
    expect(turn.text).toMatch(/\*\*file\*\*[\s\S]*\*\*shell\*\*[\s\S]*\*\*long story\*\*/);
    expect(turn.text).toMatch(/set `MODEL`/);
    expect(deltas.length).toBeGreaterThan(20);
    expect(deltas.join('')).toBe(turn.text);
    expect(deltas.every((delta) => delta.trim().split(/\s+/).length <= 2)).toBe(true);
  });

  it('is deterministic: the same conversation gets the same answer', async () => {
    const conversation = [user('hello'), said('Hi!'), user('please write a file')];
    expect(await answer(conversation)).toEqual(await answer(conversation));
  });

  it('"file" proposes writing a small note in the workspace; after the result it says it is done and offers the command', async () => {
    const { turn } = await answer([user('write a note to a file please')]);
    expect(turn.finishReason).toBe('tool_calls');
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]!.name).toBe('write_file');
    expect(JSON.parse(turn.toolCalls[0]!.arguments)).toEqual({ path: DEMO_NOTE_PATH, content: DEMO_NOTE_CONTENT });
    expect(turn.text).toMatch(/approval/);

    const id = 'call_1';
    const after = await answer([
      user('file'),
      call(id, 'write_file', { path: DEMO_NOTE_PATH, content: DEMO_NOTE_CONTENT }),
      result(id, { path: DEMO_NOTE_PATH, bytesWritten: 10, created: true }),
    ]);
    expect(after.turn.toolCalls).toEqual([]);
    expect(after.turn.text).toContain(`Done: I wrote \`${DEMO_NOTE_PATH}\``);
    expect(after.turn.text).toMatch(/\*\*shell\*\*/);
  });

  it('"shell" runs `ls -la`, or `cat` of the note once it was written, and shows what the command printed', async () => {
    const first = await answer([user('run a shell command')]);
    expect(first.turn.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ['run_shell', { command: 'ls -la' }],
    ]);

    const written = [
      user('file'),
      call('w', 'write_file', { path: DEMO_NOTE_PATH, content: DEMO_NOTE_CONTENT }),
      result('w', { path: DEMO_NOTE_PATH }),
      said('Done.'),
    ];
    const second = await answer([...written, user('now run a command')]);
    expect(JSON.parse(second.turn.toolCalls[0]!.arguments)).toEqual({ command: `cat ${DEMO_NOTE_PATH}` });

    const printed = await answer([
      ...written,
      user('shell'),
      call('s', 'run_shell', { command: `cat ${DEMO_NOTE_PATH}` }),
      result('s', { exitCode: 0, cwd: '/', output: '# A note ```x```\n' }),
    ]);
    expect(printed.turn.text).toContain('The command printed (exit code 0):');
    // The output cannot close the code block it is shown in.
    expect(printed.turn.text).toContain('````\n# A note ```x```\n````');
  });

  it('a refused write was not written: a later "shell" lists the folder instead of showing the note', async () => {
    const denied = [
      user('file'),
      call('w', 'write_file', { path: DEMO_NOTE_PATH, content: 'x' }),
      result('w', { error: 'tool call not executed', reason: 'denied by user' }),
    ];
    const after = await answer(denied);
    expect(after.turn.text).toMatch(/You denied \*\*write_file\*\*, so it did not run/);
    const next = await answer([...denied, said(after.turn.text ?? ''), user('shell')]);
    expect(JSON.parse(next.turn.toolCalls[0]!.arguments)).toEqual({ command: 'ls -la' });
  });

  it('"file and shell" writes the note, then shows it with a command', async () => {
    const conversation = [
      user('write a file, then show it with a shell command'),
      call('w', 'write_file', { path: DEMO_NOTE_PATH, content: 'x' }),
      result('w', { path: DEMO_NOTE_PATH }),
    ];
    const { turn } = await answer(conversation);
    expect(turn.text).toMatch(/^Done: I wrote/);
    expect(turn.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([
      ['run_shell', { command: `cat ${DEMO_NOTE_PATH}` }],
    ]);
  });

  it('says so when the tool it would use is not offered (no sandbox for the shell, DISABLED_TOOLS)', async () => {
    const { turn } = await answer(
      [user('shell')],
      TOOLS.filter((tool) => tool.name !== 'run_shell'),
    );
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toMatch(/\*\*run_shell\*\*.*not offered in this setup.*SHELL_SANDBOX=off/);
  });

  it('answers the latest user message, a reply injected mid-turn included, quoting it back', async () => {
    const { turn } = await answer([
      user('tell me a long story'),
      said('Once upon a time, …'),
      user('actually, set it in space'),
    ]);
    expect(turn.text).toMatch(/^You said: “actually, set it in space”\./);
    expect(turn.toolCalls).toEqual([]);
  });

  it('"long story" is a long answer streamed slowly, one word at a time', async () => {
    const { turn, deltas } = await answer([user('tell me a long story')]);
    expect(turn.text).toMatch(/^Once upon a time/);
    expect(deltas.length).toBeGreaterThan(80);
    expect(deltas.every((delta) => delta.trim().split(/\s+/).length === 1)).toBe(true);
  });

  it("a stop ends the stream at once with the signal's reason, midway through the answer", async () => {
    const slow = new DemoProvider({ pauseMs: { normal: 5, slow: 5 } });
    const controller = new AbortController();
    const chunks: ProviderChunk[] = [];
    const reason = new Error('stopped by the user');
    const run = (async () => {
      for await (const chunk of slow.stream(request([user('long story')]), controller.signal)) {
        chunks.push(chunk);
        if (chunks.length === 5) controller.abort(reason);
      }
    })();
    await expect(run).rejects.toBe(reason);
    expect(chunks).toHaveLength(5);
    expect(chunks.every((chunk) => chunk.type === 'text_delta')).toBe(true);
    // Already stopped: nothing at all.
    await expect(collect(request([user('hello')]), controller.signal)).rejects.toBe(reason);
  });

  it('writes a summary that keeps every user message when the compactor asks for one', async () => {
    const transcript = '<conversation>\nUSER: hello\n\nASSISTANT: Hi\n\nUSER: long story\n</conversation>';
    const { turn } = await answer([{ role: 'user', content: transcript }], []);
    expect(turn.text).toContain('## User messages\n- hello\n- long story');
  });
});

describe('the name `demo`', () => {
  it('resolves to the demo provider, alone (`demo:other` is refused), and reads back as `demo`', () => {
    expect(resolveModelRef('demo')).toEqual({ provider: 'demo', model: 'demo' });
    expect(resolveModelRef(' Demo ')).toEqual({ provider: 'demo', model: 'demo' });
    expect(formatModelRef(resolveModelRef('demo:demo'))).toBe('demo');
    expect(() => resolveModelRef('demo:gpt-4.1')).toThrow(/named just "demo"/);
    expect(isDemoModel('demo')).toBe(true);
    expect(isDemoModel('openai:gpt-4.1')).toBe(false);
    expect(isDemoModel(undefined)).toBe(false);
    expect(createProviderResolver({})('demo')).toBeInstanceOf(DemoProvider);
  });

  it('has text-only capabilities with tools and a window large enough that compaction is rare', () => {
    expect(capabilitiesOf('demo', 'demo')).toEqual({ tools: true, vision: false, pdf: false, contextWindow: 128_000 });
    expect(demo.capabilities()).toEqual(capabilitiesOf('demo', 'demo'));
  });

  it('needs no key, even for a bot on Slack; `demo:x` is a configuration problem in words', () => {
    const slack = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' };
    expect(loadConfig({ ...slack, MODEL: 'demo' }).MODEL).toBe('demo');
    expect(() => loadConfig({ ...slack, MODEL: 'demo:gpt-4.1' })).toThrow(
      /MODEL: "demo:gpt-4\.1": the built-in demo model is named just "demo"/,
    );
    // Without MODEL the bot still refuses to start: the demo is never its default.
    expect(() => loadConfig(slack)).toThrow(/MODEL: missing/);
  });

  it('doctor reaches no server for it', async () => {
    const config = loadConfig({ MODEL: 'demo', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(await checkModels(config, { timeoutMs: 1 })).toEqual([
      { name: 'model demo', status: 'ok', detail: expect.stringMatching(/scripted answers, no AI/) },
    ]);
  });
});
