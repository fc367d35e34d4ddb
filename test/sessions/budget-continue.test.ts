// A turn a spend limit paused, as the session layer sees it: only an admin's Continue takes it
// on (and tells the limits so), a member's is refused; a request a limit refuses leaves no
// trace; and what the session layer alone knows (who stopped, decided, switched, forgot)
// reaches the operations side.
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, type InboxItem, type InboxResolution } from '../../src/engine/index.js';
import type { Place } from '../../src/ops/ops-events.js';
import type { BudgetGate, SessionOps } from '../../src/sessions/session-ops.js';
import { CONTINUE_NEEDS_ADMIN } from '../../src/sessions/thread-controls.js';
import type { SessionRecord } from '../../src/store/session-store.js';
import { call, callTools, say, ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { recordingTool, risky } from '../support/engine-kit.js';
import { TestBot } from '../support/test-connector.js';

let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
});

const PAUSED =
  "Paused: this channel's daily budget of $5.00 is spent. An admin can press Continue to let this turn finish.";

class RecordingGate implements BudgetGate {
  readonly allowed: { place: Place; by: string }[] = [];
  refuse: string | undefined;
  async mayStart(): Promise<{ ok: true } | { ok: false; reason: string }> {
    return this.refuse ? { ok: false, reason: this.refuse } : { ok: true };
  }
  async allowTurn(place: Place, by: string): Promise<void> {
    this.allowed.push({ place, by });
  }
}

class RecordingOps implements SessionOps {
  readonly heard: string[] = [];
  stopRequested(_session: SessionRecord, by: string): void {
    this.heard.push(`stop by ${by}`);
  }
  decided(_session: SessionRecord, item: InboxItem, resolution: InboxResolution, by: string): void {
    this.heard.push(`${item.kind} ${resolution.kind === 'approval' ? resolution.outcome : resolution.kind} by ${by}`);
  }
  modelSwitched(_session: SessionRecord, by: string, from: string, to: string): void {
    this.heard.push(`model ${from} -> ${to} by ${by}`);
  }
  grantsRevoked(_session: SessionRecord, by: string, what: string): void {
    this.heard.push(`revoked ${what} by ${by}`);
  }
  forgotten(_session: SessionRecord, by: string): void {
    this.heard.push(`forgotten by ${by}`);
  }
  budgetContinued(_session: SessionRecord, by: string): void {
    this.heard.push(`continued by ${by}`);
  }
}

async function start(steps: Step[], extra: { tools?: Parameters<typeof TestBot.start>[0]['tools'] } = {}) {
  const provider = new ScriptedProvider(steps);
  const budget = new RecordingGate();
  const ops = new RecordingOps();
  bot = await TestBot.start({ provider, admins: 'A1', manager: { budget, ops }, ...extra });
  return { bot, provider, budget, ops };
}

describe('a turn paused by a spend limit', () => {
  it("ends in a budget notice; the starter's Continue is refused, an admin's lets the turn finish and is reported", async () => {
    const { bot, provider, budget, ops } = await start([
      { error: new ProviderError('budget', PAUSED) },
      say('All done.'),
    ]);
    await bot.say('T1', 'U1', 'summarise the incidents');
    await bot.manager.idle();
    expect(bot.events('T1').filter((event) => event.type === 'error')).toEqual([
      { type: 'error', message: PAUSED, errorKind: 'budget' },
    ]);
    const transcript = await bot.store.loadTranscript(bot.sessionId('T1'));
    expect(transcript.at(-1)).toMatchObject({ role: 'notice', kind: 'budget', text: PAUSED });

    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U1')).toEqual({
      status: 'refused',
      reason: CONTINUE_NEEDS_ADMIN,
    });
    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U2')).toMatchObject({ status: 'refused' });
    expect(provider.requests).toHaveLength(1);
    expect(budget.allowed).toEqual([]);

    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'A1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(2);
    expect(budget.allowed).toEqual([
      {
        place: {
          sessionId: bot.sessionId('T1'),
          platform: 'test',
          workspace: expect.any(String),
          channel: expect.any(String),
        },
        by: 'A1',
      },
    ]);
    expect(ops.heard).toEqual(['continued by A1']);
    expect((await bot.store.loadTranscript(bot.sessionId('T1'))).at(-1)).toMatchObject({
      role: 'assistant',
      content: 'All done.',
    });
  });

  it("an ordinary failure is still the starter's to retry: only a budget pause needs an admin", async () => {
    const { bot, budget } = await start([
      { error: new ProviderError('server', 'The provider had a server error.') },
      say('ok'),
    ]);
    await bot.say('T1', 'U1', 'question');
    await bot.manager.idle();
    expect(await bot.manager.controls.retry(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'done' });
    await bot.manager.idle();
    expect(budget.allowed).toEqual([]);
  });

  it('a request a limit refuses is refused with its words, and nothing is stored or sent', async () => {
    const { bot, provider, budget } = await start([say('never')]);
    budget.refuse = 'Your daily budget of $1.00 is spent; it resets at 00:00 UTC.';
    expect(await bot.say('T1', 'U1', 'hello')).toEqual({ status: 'refused', reason: budget.refuse });
    await bot.manager.idle();
    expect(provider.requests).toHaveLength(0);
    expect(await bot.store.getPendingInputs(bot.sessionId('T1'))).toEqual([]);
  });
});

describe('what the session layer tells the operations side', () => {
  it('who decided a prompt, who stopped, who switched the model, who revoked and who forgot', async () => {
    const writeNote = recordingTool('write_note', risky);
    const { bot, ops } = await start([callTools(call('write_note', { text: 'x' })), say('wrote it')], {
      tools: [writeNote],
    });
    await bot.say('T1', 'U1', 'write a note');
    await bot.waitForEvent('T1', 'permission_required');
    const [item] = await bot.inbox.pending(bot.sessionId('T1'));
    expect(await bot.manager.resolve(item!.id, { choice: 'always_tool' }, 'A1')).toMatchObject({ ok: true });
    await bot.manager.idle();
    expect(await bot.manager.controls.switchModel(bot.sessionId('T1'), 'other-model', 'U1')).toMatchObject({
      status: 'done',
    });
    expect(await bot.manager.controls.revokeGrant(bot.sessionId('T1'), { tool: 'write_note' }, 'U1')).toMatchObject({
      status: 'done',
    });
    expect(await bot.manager.interrupt(bot.sessionId('T1'), 'U1')).toMatchObject({ status: 'idle' });
    expect(await bot.manager.controls.forget(bot.sessionId('T1'), 'A1')).toMatchObject({ status: 'done' });
    expect(ops.heard).toEqual([
      'approval always_tool by A1',
      'model scripted-model -> other-model by U1',
      'revoked write_note by U1',
      'stop by U1',
      'forgotten by A1',
    ]);
  });
});
