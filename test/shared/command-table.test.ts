// The command table is the one list of thread commands: every platform's help names each command
// it offers, Discord registers exactly those, and the runner runs every one of them and no other.
import { readFile } from 'node:fs/promises';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/logger.js';
import type { SessionManager } from '../../src/sessions/session-manager.js';
import {
  commandDescription,
  commandsOn,
  commandTableMarkdown,
  THREAD_COMMANDS,
  type CommandPlatform,
} from '../../connectors/shared/command-table.js';
import { runThreadCommand, type CommandContext, type CommandMarkup } from '../../connectors/shared/thread-commands.js';
import { COMMAND_HELP as SLACK_THREAD_HELP } from '../../connectors/slack/thread-commands.js';
import { HELP_TEXT as SLACK_AGENT_HELP } from '../../connectors/slack/agent-command.js';
import { DISCORD_COMMAND_HELP, SLASH_COMMANDS } from '../../connectors/discord/slash-commands.js';
import { COMMAND_HELP as PLAYGROUND_HELP } from '../../connectors/web/web-inbound.js';

const HELPS: { where: string; platform: CommandPlatform; text: string }[] = [
  { where: 'Slack thread /help', platform: 'slack', text: SLACK_THREAD_HELP },
  { where: 'Slack /agent', platform: 'slack', text: SLACK_AGENT_HELP },
  { where: 'Discord /help', platform: 'discord', text: DISCORD_COMMAND_HELP },
  { where: 'the playground /help', platform: 'web', text: PLAYGROUND_HELP },
];

/** The help shows the command as code: "`/usage" then its arguments or the closing mark. */
function names(text: string, command: string): boolean {
  return new RegExp(`\`/${command}[ \`]`).test(text);
}

const MARKUP: CommandMarkup = { bold: (text) => `*${text}*`, escape: (text) => text, switched: '🔄', help: 'HELP' };

/** A session layer that knows no thread: every command gets as far as its first question and answers. */
function strangerManager(calls: string[]): SessionManager {
  const noSession = async (name: string) => {
    calls.push(name);
    return { status: 'unknown_session' as const };
  };
  const fake = {
    isAdmin: () => false,
    interrupt: () => noSession('interrupt'),
    controls: {
      listGrants: () => noSession('listGrants'),
      status: () => noSession('status'),
      modelsOffered: async () => [],
      profileNames: () => [],
      forget: () => noSession('forget'),
      retry: () => noSession('retry'),
    },
  };
  return fake as unknown as SessionManager;
}

/** What a command said, privately or in the thread, with the session calls it made. */
async function run(name: string, args: string[] = []): Promise<{ said: string[]; calls: string[] }> {
  const said: string[] = [];
  const calls: string[] = [];
  const context: CommandContext = {
    connector: {
      whisper: async (_channel, _user, _thread, text) => void said.push(text),
      post: async (_channel, _thread, text) => void said.push(text),
    },
    key: { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1.0' },
    userId: 'U1',
    manager: strangerManager(calls),
    logger: silentLogger,
    defaultTimezone: 'UTC',
  };
  await runThreadCommand({ name, args }, context, MARKUP);
  return { said, calls };
}

/** The command names the runner's switches name: the `case '…':` labels in the functions that dispatch. */
async function runnerCaseLabels(): Promise<string[]> {
  const dispatchers: Record<string, string> = {
    'connectors/shared/thread-commands.ts': 'runThreadCommand',
    'connectors/shared/schedule-commands.ts': 'runScheduleCommand',
  };
  const labels: string[] = [];
  for (const [file, dispatcher] of Object.entries(dispatchers)) {
    const source = ts.createSourceFile(
      file,
      await readFile(new URL(`../../${file}`, import.meta.url), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const found = source.statements.find(
      (statement): statement is ts.FunctionDeclaration =>
        ts.isFunctionDeclaration(statement) && statement.name?.text === dispatcher,
    );
    expect(found, `${dispatcher} in ${file}`).toBeDefined();
    const visit = (node: ts.Node): void => {
      if (ts.isCaseClause(node) && ts.isStringLiteral(node.expression)) labels.push(node.expression.text);
      node.forEachChild(visit);
    };
    found?.forEachChild(visit);
  }
  return labels;
}

describe('the command table', () => {
  it.each(HELPS)('$where names every command the table offers on its platform', ({ platform, text }) => {
    const missing = commandsOn(platform)
      .map((command) => command.name)
      .filter((name) => !names(text, name));
    expect(missing).toEqual([]);
  });

  it('Slack /agent lists the commands its thread help lists, /usage, /profile and the schedules among them', () => {
    for (const name of ['usage', 'profile', 'schedule', 'schedules', 'unschedule'])
      expect(names(SLACK_AGENT_HELP, name)).toBe(true);
  });

  it('Discord registers the table, in its order, with descriptions Discord takes (1 to 100 characters); its /help fits one message', () => {
    const registered = SLASH_COMMANDS as { name: string; description: string }[];
    expect(registered.map((command) => command.name)).toEqual(commandsOn('discord').map((command) => command.name));
    for (const command of registered) expect(command.description.length, command.name).toBeLessThanOrEqual(100);
    expect(registered.find((command) => command.name === 'feedback')?.description).toMatch(/^Admins: /);
    expect(DISCORD_COMMAND_HELP.length).toBeLessThanOrEqual(2000);
  });

  it('each description is one plain line, the same in mrkdwn and Markdown, short enough for Discord wherever it is offered', () => {
    for (const command of THREAD_COMMANDS) {
      expect(command.description, command.name).toMatch(/^[A-Z][^\n*_`<>~|]*[^.]$/u);
      expect(commandDescription(command).length, command.name).toBeLessThanOrEqual(100);
    }
  });

  it('the runner runs every command in the table, aliases too, and each answers', async () => {
    for (const command of THREAD_COMMANDS) {
      for (const name of [command.name, ...(command.aliases ?? [])]) {
        const { said } = await run(name);
        expect(said.length, name).toBeGreaterThan(0);
        expect(said.join('\n'), name).not.toContain('I do not know');
      }
    }
    expect((await run('continue')).calls).toEqual(['retry']);
  });

  it('the runner knows no command the table does not hold', async () => {
    const tabled = THREAD_COMMANDS.map((command) => command.name);
    const labels = await runnerCaseLabels();
    expect(labels.filter((label) => !(tabled as string[]).includes(label))).toEqual([]);
    expect(tabled.filter((name) => !labels.includes(name))).toEqual([]);
    expect((await run('dance')).said).toEqual(['I do not know `/dance`.\nHELP']);
  });

  it('renders as a Markdown table for the README, a row per command, a pipe in its arguments escaped', () => {
    const lines = commandTableMarkdown().split('\n');
    expect(lines.slice(0, 2)).toEqual(['| command | what it does |', '| --- | --- |']);
    expect(lines).toHaveLength(THREAD_COMMANDS.length + 2);
    for (const [index, command] of THREAD_COMMANDS.entries()) {
      const row = lines[index + 2]!;
      expect(row.startsWith(`| \`/${command.name}`), row).toBe(true);
      expect(row.split(/(?<!\\)\|/), row).toHaveLength(4);
    }
    expect(commandTableMarkdown()).toContain('| `/usage [@person \\| #channel]` |');
    expect(commandTableMarkdown()).toContain('| `/feedback` | Admins: the 👍 / 👎');
  });
});
