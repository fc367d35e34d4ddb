// Thread commands (`/status`, `/model`, `/profile` (admins), `/grants`, `/revoke`, `/retry`, `/stop`, `/forget`,
// `/feedback` (admins: the 👍 / 👎 totals), `/usage` (spend), `/schedule`, `/schedules`, `/unschedule`
// (schedule-commands.ts), `/help`), for every platform: each is a call on the session layer, which applies the same
// "who may" policy as buttons and reactions. Answers that concern only the asker are private
// (whispered); a model switch is said in the thread. How the words are marked up is the
// platform's (`CommandMarkup`: Slack mrkdwn, Discord markdown); Slack reads a command from a
// mention (`@bot /model …`), Discord from a slash command.
import type { GrantOwner, GrantsSnapshot } from '../../src/engine/index.js';
import { sessionIdOf } from '../../src/sessions/thread-records.js';
import { threadCommandNamed } from './command-table.js';
import { feedbackTotalsText } from './feedback-totals.js';
import { endThreadSchedules, isScheduleCommand, runScheduleCommand } from './schedule-commands.js';
import { usageScopes, usageTarget, usageText } from './usage-command.js';
import type { CommandContext, CommandMarkup } from './command-context.js';

export type { CommandContext, CommandMarkup } from './command-context.js';

export async function runThreadCommand(
  command: { name: string; args: string[] },
  context: CommandContext,
  markup: CommandMarkup,
): Promise<void> {
  const { key, userId, manager, connector } = context;
  const { bold, escape } = markup;
  const actor = { external: context.external };
  const sessionId = sessionIdOf(key);
  const whisper = (text: string) => connector.whisper(key.channel, userId, key.thread, text);
  const explain = (status: string, reason?: string): Promise<void> => {
    const words: Record<string, string> = {
      unknown_session: 'There is no conversation in this thread yet.',
      busy: 'I am working in this thread right now; try again when I am done (or stop me with 🛑).',
      nothing_to_do: 'There is nothing to retry here.',
      idle: 'Nothing is running in this thread.',
    };
    return whisper(reason ?? words[status] ?? `Could not do that (${status}).`);
  };
  // The names are the command table's (command-table.ts), as every help text's: one unknown to it is unknown here.
  const known = threadCommandNamed(command.name)?.name;
  if (!known) return whisper(`I do not know \`/${escape(command.name)}\`.\n${markup.help}`);
  if (isScheduleCommand(known)) return runScheduleCommand({ name: known, args: command.args }, context, markup);
  switch (known) {
    case 'help':
      return whisper(markup.help);
    case 'status': {
      const looked = await manager.controls.listGrants(sessionId, userId, actor);
      if (looked.status !== 'done')
        return explain(looked.status, looked.status === 'refused' ? looked.reason : undefined);
      const grants = looked.value;
      const described = await manager.controls.status(sessionId, userId, actor);
      const session = described.status === 'done' ? described.value : undefined;
      return whisper(
        [
          session
            ? `${bold('Profile:')} ${escape(session.profile)}${session.profileGone ? ' (no longer in the profiles file: the default settings apply)' : ''}`
            : '',
          `${bold('Model:')} ${session?.model ?? 'unknown'}${session?.running ? ' · working now' : ''}`,
          `${bold('Always allowed here:')} ${describeGrants(grants.thread)}${grants.channel.tools.length + grants.channel.commands.length > 0 ? ` · in this channel: ${describeGrants(grants.channel)}` : ''}`,
          session?.pendingPrompts ? `${bold('Waiting for:')} ${session.pendingPrompts} decision(s)` : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    }
    case 'model': {
      const model = command.args[0];
      const available = await manager.controls.modelsOffered(sessionId);
      if (!model) {
        return whisper(
          available.length > 0
            ? `Say which model: ${available.map((name) => `\`/model ${name}\``).join(', ')}.`
            : 'Say which model: `/model openai:gpt-4.1` or `/model anthropic:claude-sonnet-4-6`.',
        );
      }
      try {
        const result = await manager.controls.switchModel(sessionId, model, userId);
        if (result.status !== 'done')
          return explain(result.status, result.status === 'refused' ? result.reason : undefined);
        return connector.post(
          key.channel,
          key.thread,
          `${markup.switched} ${escape(result.notice ?? `Model set to ${model}`)} (by <@${userId}>).`,
        );
      } catch (error) {
        return whisper(
          escape(`Could not switch to ${model}: ${error instanceof Error ? error.message : String(error)}`),
        );
      }
    }
    case 'profile': {
      const name = command.args[0];
      const names = manager.controls.profileNames();
      if (!name) {
        const described = await manager.controls.status(sessionId, userId, actor);
        const current =
          described.status === 'done' ? `This thread runs under ${bold(escape(described.value.profile))}. ` : '';
        return whisper(
          names.length > 0
            ? `${current}Admins may move it: ${names.map((one) => `\`/profile ${escape(one)}\``).join(', ')}.`
            : `${current}No profiles are set up (PROFILES).`,
        );
      }
      const result = await manager.controls.switchProfile(sessionId, name, userId, {
        operator: context.operator === true,
      });
      if (result.status !== 'done')
        return explain(result.status, result.status === 'refused' ? escape(result.reason) : undefined);
      return connector.post(
        key.channel,
        key.thread,
        `${markup.switched} ${escape(`Profile set to ${result.profile ?? name}`)} (by <@${userId}>); it applies from the next turn.`,
      );
    }
    case 'grants': {
      const looked = await manager.controls.listGrants(sessionId, userId, actor);
      if (looked.status !== 'done')
        return explain(looked.status, looked.status === 'refused' ? looked.reason : undefined);
      const grants = looked.value;
      return whisper(
        `Always allowed in this thread: ${describeGrants(grants.thread)}\nIn this channel: ${describeGrants(grants.channel)}`,
      );
    }
    case 'revoke': {
      const [tool, ...rest] = command.args;
      if (!tool) return whisper('Say what to revoke: `/revoke write_file` or `/revoke run_shell npm test`.');
      const result = await manager.controls.revokeGrant(
        sessionId,
        rest.length > 0 ? { tool, command: rest.join(' ') } : { tool },
        userId,
      );
      // What the user typed is echoed as text, never as markup (a `<https://…|link>` stays inert).
      const what = escape(`${tool}${rest.length > 0 ? ` \`${rest.join(' ')}\`` : ''}`);
      if (result.status === 'nothing_to_do')
        return whisper(`Nothing to revoke: no grant of ${what} here. See \`/grants\`.`);
      if (result.status !== 'done')
        return explain(result.status, result.status === 'refused' ? result.reason : undefined);
      return whisper(`Revoked: ${what}. I will ask again.`);
    }
    case 'forget': {
      const result = await manager.controls.forget(sessionId, userId);
      if (result.status !== 'done')
        return explain(result.status, result.status === 'refused' ? result.reason : undefined);
      if (connector.closed)
        await connector
          .closed(key)
          .catch((error: unknown) =>
            context.logger.warn({ err: error }, "could not close the forgotten thread's session"),
          );
      return whisper(`Forgotten: everything I stored for this thread is deleted.${await endThreadSchedules(context)}`);
    }
    case 'stop': {
      const result = await manager.interrupt(sessionId, userId);
      if (result.status !== 'done')
        return explain(result.status, result.status === 'refused' ? result.reason : undefined);
      return;
    }
    case 'retry': {
      const result = await manager.controls.retry(sessionId, userId, { operator: context.operator === true });
      if (result.status !== 'done')
        return explain(result.status, result.status === 'refused' ? result.reason : undefined);
      return;
    }
    case 'feedback': {
      // The totals say how people judge the bot's answers, and quote their reasons: admins only.
      if (!context.operator && !manager.isAdmin(userId))
        return whisper('Only the bot admins (ADMINS) can see the feedback on answers.');
      if (!context.feedback) return whisper('The feedback on answers is not kept here.');
      return whisper(feedbackTotalsText(await context.feedback.totals(), markup));
    }
    case 'usage': {
      const target = usageTarget(command.args);
      if (target.kind === 'invalid')
        return whisper(
          `Say whose spend: \`/usage\` (yours, this channel's and the workspace's), or, for admins, \`/usage @person\` or \`/usage #channel\`. Not understood: ${escape(target.words)}`,
        );
      if (target.kind !== 'self' && !context.operator && !manager.isAdmin(userId))
        return whisper(
          "Only the bot admins (ADMINS) can see another person's or channel's spend; `/usage` shows yours.",
        );
      if (!context.spend) return whisper('Spend is not recorded here.');
      return whisper(await usageText(context.spend, usageScopes(key, userId, target), markup));
    }
    default: {
      // A command in the table that no case runs: tsc says so here, and this keeps the person told.
      const unrun: never = known;
      return whisper(`I do not know \`/${escape(String(unrun))}\`.\n${markup.help}`);
    }
  }
}

/** Each grant with who gave it and whose turns it covers. */
function describeGrants(grants: GrantsSnapshot): string {
  const owner = (grant: GrantOwner): string =>
    grant.everyone
      ? `by <@${grant.by ?? 'unknown'}>, for everyone`
      : grant.by
        ? `by <@${grant.by}>, for their own requests`
        : 'from before grants had owners: covers no one';
  const parts = [
    ...grants.tools.map((grant) => `\`${grant.tool}\` (${owner(grant)})`),
    ...grants.commands.map((grant) => `\`${grant.command}\` in ${grant.tool} (${owner(grant)})`),
  ];
  return parts.length > 0 ? parts.join(', ') : 'nothing';
}
