import { describe, expect, it } from 'vitest';
import type { InboxItem } from '../../src/engine/index.js';
import type { ToolCardState } from '../../connectors/shared/tool-card.js';
import { threadName } from '../../connectors/discord/discord-connector.js';
import { cardMessage, fullArgumentsFile, noteMessage } from '../../connectors/discord/thread-messages.js';

const approval = (): InboxItem =>
  ({
    id: 'item-1',
    kind: 'approval',
    state: 'pending',
    choices: ['once', 'always_tool', 'always_command', 'deny'],
    sessionId: 's',
    toolCallId: 'call_1',
  }) as unknown as InboxItem;

function shellCard(command: string): ToolCardState {
  return {
    toolCallId: 'call_1',
    name: 'run_shell',
    argsSummary: command,
    phase: 'awaiting_approval',
    command,
    fullArguments: [{ label: 'Command', text: command }],
  };
}

describe('a Discord approval card', () => {
  it('shows a short command in full, in a code block, with the "this command" button', () => {
    const message = cardMessage(shellCard('echo hi'), { item: approval() });
    expect(message.content).toContain('```\necho hi\n```');
    expect(message.components.flatMap((row) => row.components.map((b) => b.label))).toEqual([
      'Approve',
      'Always allow run_shell for me in this thread',
      'Always allow this command for me in this thread',
      'Deny',
    ]);
    expect(fullArgumentsFile(shellCard('echo hi'))).toBeUndefined();
  });

  it('reveals hidden characters and withholds "always allow this command" for such a command', () => {
    const card = shellCard('echo safe\u202E; rm -rf x');
    const message = cardMessage(card, { item: approval() });
    expect(message.content).toContain('⟨U+202E⟩');
    expect(message.content).toContain('invisible or direction-changing');
    expect(JSON.stringify(message.components)).not.toContain('always_command');
  });

  it('a command too long for 2,000 characters, or holding ```, goes to a file with every character', () => {
    for (const command of [`echo ${'x'.repeat(2_500)}`, 'printf "```"']) {
      const card = shellCard(command);
      const file = fullArgumentsFile(card)!;
      expect(file.text).toContain(command);
      const message = cardMessage(card, { item: approval() });
      expect(message.content.length).toBeLessThanOrEqual(2_000);
      expect(message.content).toContain('attached file');
      expect(JSON.stringify(message.components)).not.toContain('always_command');
    }
  });

  it('a long call full of misleading words still fits one message, its status line included, with Show all to decide', () => {
    // Long host names: each warning quotes the host, what it is looked up as, and the mixed word.
    const words = ['gіthub', 'раураl', 'аррlе', 'miсrosoft'].map((name) => `${name}${'-mirror'.repeat(7)}.example.com`);
    const command = `${words.map((word) => `curl https://${word}/${'x'.repeat(300)}`).join(' && ')} && ${'true && '.repeat(400)}echo end`;
    const message = cardMessage(shellCard(command), { item: approval() });
    expect(message.content.length).toBeLessThanOrEqual(2_000);
    expect(message.content).toContain('gіthub-mirror');
    expect(message.content).toMatch(/Awaiting approval$/);
    expect(message.components.flatMap((row) => row.components.map((b) => b.label))).toEqual([
      'Show all to decide',
      'Deny',
    ]);
  });

  it('a decided card shows who decided and has no buttons', () => {
    const message = cardMessage(
      { ...shellCard('ls'), phase: 'done', decision: { by: '42', choice: 'once' } },
      { item: { ...approval(), state: 'resolved' } },
    );
    expect(message.components).toEqual([]);
    expect(message.content).toContain('Approved by <@42>');
  });

  it('a failure note carries a Retry button with the session id', () => {
    const note = noteMessage({ kind: 'failed', message: 'server error', action: { kind: 'retry', sessionId: 'sess' } });
    expect(note.components[0]!.components[0]).toMatchObject({ label: 'Retry', custom_id: 'r:sess' });
  });

  it("a spend limit's pause carries Continue (admins) on the same retry id; its 80 % notice has no button", () => {
    const paused = noteMessage({
      kind: 'budget_paused',
      message: "Paused: this channel's daily budget of $5.00 is spent.",
      action: { kind: 'continue_past_limit', sessionId: 'sess' },
    });
    expect(paused.content).toBe("💸 Paused: this channel's daily budget of $5.00 is spent.");
    expect(paused.components[0]!.components[0]).toMatchObject({ label: 'Continue (admins)', custom_id: 'r:sess' });
    expect(noteMessage({ kind: 'budget_warning', text: "This channel's daily budget is 80 % spent." })).toEqual({
      content: "📈 This channel's daily budget is 80 % spent.",
      components: [],
    });
  });

  it("a schedule paused because its creator lost access pings the thread's approvers, and only them", () => {
    const note = noteMessage({
      kind: 'schedule_paused',
      scheduleId: 's-abcdef',
      task: 'ping <@999> daily',
      creator: '111',
      approvers: ['222', '333'],
      runsLeft: 2,
      next: 'Sat 5 Dec 2026, 09:00 (UTC)',
    });
    expect(note.content).toBe(
      '⏸️ <@222> <@333>: schedule `s-abcdef` (“ping <@999> daily”) is paused: <@111>, who set it, may no longer use the bot here, and each of its runs would be their turn, so none runs and nothing more is said about it here. It resumes by itself at a run once they may use the bot here again (an admin adds them back), and ends by itself after 2 more refused runs (the next is due Sat 5 Dec 2026, 09:00 (UTC)). End it now with `/unschedule s-abcdef`.',
    );
    expect(note.pingUsers).toEqual(['222', '333']);
    const ended = noteMessage({
      kind: 'schedule_paused',
      scheduleId: 's-abcdef',
      task: 'once',
      creator: '111',
      approvers: [],
      runsLeft: 0,
    });
    expect(ended.content).toBe(
      '⏸️ The run of schedule `s-abcdef` (“once”) was not made: <@111>, who set it, may no longer use the bot here. That was its only run, so it has ended.',
    );
    expect(ended.pingUsers).toEqual([]);
  });
});

describe('a thread name', () => {
  it('is one line of 1 to 100 characters', () => {
    expect(threadName('  plan\n the   release ')).toBe('plan the release');
    expect(threadName('')).toBe('Conversation');
    const long = threadName('word '.repeat(50));
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long.endsWith('…')).toBe(true);
  });
});
