// A 🛑 reaction stops its thread's turn: the shared stop (shared/thread-stop.ts) finds the
// session from the message the reaction was put on, notes who stopped it and asks the session
// layer's `interrupt`, which judges whether they may. A refusal goes to the person alone
// (private-answers.ts): Discord has no ephemeral answer to a reaction.
import type { MessageReaction, PartialMessageReaction, PartialUser, User } from 'discord.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { ThreadPresenter } from '../shared/thread-presenter.js';
import { sessionStoppedAt, stopThread, type ThreadStopDeps } from '../shared/thread-stop.js';
import { discordMessageKey } from './discord-surface.js';
import { sessionIdOfReacted, type ChannelLookup } from './session-places.js';

const STOP_EMOJI = ['🛑', 'octagonal_sign'];

export interface StopReactionDeps {
  manager: ThreadStopDeps['manager'];
  presenterFor: (session: SessionRecord) => ThreadPresenter;
  /** The bot's own user id (known once the gateway identified it). */
  botUserId: () => string;
  /** The gateway's cached channels (a reaction names only its message's channel id). */
  channels: ChannelLookup;
  /** An answer to the reaction for the person alone (private-answers.ts). */
  whisper: (userId: string, channelId: string, replyTo: string, text: string) => Promise<void>;
}

export async function takeStopReaction(
  deps: StopReactionDeps,
  reaction: MessageReaction | PartialMessageReaction,
  user: User | PartialUser,
): Promise<void> {
  if (user.bot || user.id === deps.botUserId()) return;
  const name = reaction.emoji.name ?? '';
  if (!STOP_EMOJI.includes(name)) return;
  const { channelId, id: messageId, guildId } = reaction.message;
  const sessionId = await sessionStoppedAt(deps, discordMessageKey(channelId, messageId), () =>
    sessionIdOfReacted(reaction.message, guildId, deps.channels),
  );
  const stopped = await stopThread(deps, sessionId, user.id);
  if (stopped?.result.status === 'refused')
    await deps.whisper(user.id, stopped.record?.key.thread ?? channelId, messageId, stopped.result.reason);
}
