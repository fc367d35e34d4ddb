// The audit trail of the assembled bot: a thread with an approved tool call (and an "always"
// grant), a second request stopped by an admin while its approval waited, a model switch, a
// revoke and a /forget, each recorded once, with who acted; and nothing anyone wrote (the
// request, the model's answer, a secret in a tool's arguments) in any record.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startCore, type Core } from '../../../src/core.js';
import type { InboxItem } from '../../../src/engine/index.js';
import { runAuditExport } from '../../../src/ops/audit/audit-export.js';
import { FakeOpenAI } from '../../fakes/openai-server.js';
import { coreTestEnv } from '../../support/core-env.js';
import { memoryLogger, waitFor } from '../../support/engine-kit.js';
import { tempDir } from '../../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const REQUEST_PHRASE = 'PURPLE-WALRUS-7731';
const ANSWER_PHRASE = 'ORANGE-HERON-5512';
const SECRET = 'sk-audit-secret-4b9d2f7a1c';
const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

async function boot() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const env = {
    ...coreTestEnv(dir.path, fake),
    OPENAI_API_KEY: SECRET,
    ADMINS: 'U9',
    MODELS: 'openai:gpt-4.1,openai:gpt-4.1-mini',
    SHELL_SANDBOX: 'off',
  };
  const core: Core = await startCore(loadConfig(env), { logger: memoryLogger() });
  let closed = false;
  const close = async () => {
    if (!closed) await core.close();
    closed = true;
  };
  cleanups.push(close);
  const prompts: InboxItem[] = [];
  core.observers.add('test', {
    onEvent: (_session, _event, prompt) => void (prompt ? prompts.push(prompt) : undefined),
  });
  await core.recover();
  return { core, fake, env, prompts, close };
}

async function exported(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; lines: Record<string, unknown>[]; text: string }> {
  let text = '';
  const code = await runAuditExport(args, env, { out: async (chunk) => void (text += chunk), err: () => undefined });
  return {
    code,
    text,
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('the audit trail of a running bot', () => {
  it('records each act once, with who acted and where, and keeps no message text or secret', async () => {
    const { core, fake, env, prompts, close } = await boot();

    // U1 asks; the model writes a file with a secret in its content; the admin U9 (with ADMINS set, approvals are theirs) allows write_file "always".
    fake.replyToolCalls([{ name: 'write_file', arguments: { path: 'notes.md', content: `token=${SECRET}\n` } }]);
    fake.replyText(`All done: ${ANSWER_PHRASE} noted.`);
    const first = await core.manager.deliver(key, {
      text: `Please keep the ${REQUEST_PHRASE} plan`,
      userId: 'U1',
      eventId: 'e1',
      source: { platform: 'test', userId: 'U1' },
    });
    expect(first.status).toBe('started');
    const sessionId = (first as { sessionId: string }).sessionId;
    await waitFor(() => prompts.length === 1);
    expect(await core.manager.resolve(prompts[0]!.id, { choice: 'always_tool' }, 'U9')).toMatchObject({ ok: true });
    await core.manager.idle();

    // U2 asks for another write (U9's grant is U9's own: it asks again); U9 stops it while it waits.
    fake.replyToolCalls([{ name: 'write_file', arguments: { path: 'other.md', content: 'more' } }]);
    await core.manager.deliver(key, {
      text: `And the ${REQUEST_PHRASE} follow-up`,
      userId: 'U2',
      eventId: 'e2',
      source: { platform: 'test', userId: 'U2' },
    });
    await waitFor(() => prompts.length === 2);
    expect(await core.manager.interrupt(sessionId, 'U9')).toMatchObject({ status: 'done' });
    await core.manager.idle();

    expect(await core.manager.controls.switchModel(sessionId, 'openai:gpt-4.1-mini', 'U1')).toMatchObject({
      status: 'done',
    });
    expect(await core.manager.controls.revokeGrant(sessionId, { tool: 'write_file' }, 'U9')).toMatchObject({
      status: 'done',
      revoked: 1,
    });
    expect(await core.manager.controls.forget(sessionId, 'U1')).toMatchObject({ status: 'done' });
    await close(); // flushes the trail

    const { code, lines, text } = await exported(env);
    expect(code).toBe(0);
    const summary = lines.map((record) => [
      record.type,
      record.by ?? null,
      record.decision ?? record.change ?? record.outcome ?? record.kind ?? null,
    ]);
    expect(summary).toEqual([
      ['turn_started', 'U1', 'run'],
      ['wait_ended', 'U9', 'always_tool'],
      ['grant_changed', 'U9', 'given'],
      ['tool_ended', null, 'ok'],
      ['turn_started', 'U2', 'run'],
      ['stop_requested', 'U9', null],
      // The stop closed the waiting prompt without a click, then the call and the turn.
      ['wait_ended', null, 'interrupted'],
      ['tool_ended', null, 'interrupted'],
      ['stopped', 'U9', null],
      ['model_switched', 'U1', null],
      ['grant_changed', 'U9', 'revoked'],
      ['forgotten', 'U1', null],
    ]);
    expect(lines.filter((record) => record.type === 'stopped')).toEqual([
      expect.objectContaining({ by: 'U9', latencyMs: expect.any(Number) }),
    ]);
    // Every record says where, and the forgotten thread's records outlive its /forget.
    for (const record of lines)
      expect(record).toMatchObject({
        platform: 'test',
        workspace: 'W1',
        channel: 'C1',
        sessionId,
        id: expect.any(String),
      });
    expect(new Set(lines.map((record) => record.id)).size).toBe(lines.length);
    expect(lines[0]).toMatchObject({ model: 'openai:gpt-4.1' });
    expect(lines.find((record) => record.type === 'tool_ended')).toMatchObject({
      tool: 'write_file',
      args: expect.stringContaining('notes.md'),
      durationMs: expect.any(Number),
    });
    expect(lines.find((record) => record.type === 'wait_ended')).toMatchObject({
      kind: 'approval',
      tool: 'write_file',
      closed: false,
      waitedMs: expect.any(Number),
    });
    expect(lines.find((record) => record.decision === 'interrupted')).toMatchObject({ closed: true });
    expect(lines.find((record) => record.type === 'model_switched')).toMatchObject({
      from: 'openai:gpt-4.1',
      to: 'openai:gpt-4.1-mini',
    });

    // Facts, never words: the two requests, the answer and the secret appear nowhere.
    expect(text).not.toContain(REQUEST_PHRASE);
    expect(text).not.toContain(ANSWER_PHRASE);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('4b9d2f7a1c');
  });

  it("keeps writing its records through a shutdown for a restart, when the store refuses the threads' writes", async () => {
    const { core, env, close } = await boot();
    const place = { sessionId: 'test:W1:C1:T9', platform: 'test', workspace: 'W1', channel: 'C1' };
    core.ops.emit({ type: 'stop_requested', at: Date.now(), place, by: 'U1' });
    expect(await core.suspend()).toBe(0);
    // Heard while the bot shuts down (the store is fenced by now): recorded all the same.
    core.ops.emit({ type: 'stopped', at: Date.now(), place, by: 'U1' });
    await close();
    expect((await exported(env)).lines.map((record) => record.type)).toEqual(['stop_requested', 'stopped']);
  });
});
