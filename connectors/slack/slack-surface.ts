// One Slack thread as the thread presenter's surface (shared/thread-surface.ts): cards and
// notes in Block Kit (blocks.ts), an answer streamed natively or posted and edited
// (answer-stream.ts), marks as emoji reactions, and where each card is across restarts
// (card-index.ts).
//
// Slack's quirks, answered here: adding a reaction that is there already fails with
// `already_reacted`, removing one that is not with `no_reaction` (neither is a failure);
// the native "is thinking…" status exists only in DM (assistant) threads, so a channel thread
// shows a wait for a model slot as an hourglass on its first message instead. Where the
// workspace has agent sessions, the thread's status is its session's (agent-session.ts), and
// the DM status line is the fallback.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord, ThreadRecords } from '../../src/sessions/thread-records.js';
import type {
  AnswerDraft,
  CardLocator,
  CardView,
  InputMark,
  MessageId,
  StatusDetails,
  ThreadNote,
  ThreadSurface,
  WorkStatus,
} from '../shared/thread-surface.js';
import type { AgentSessions, SessionThread } from './agent-session.js';
import { AnswerStream } from './answer-stream.js';
import type { StreamingSupport } from './streaming-support.js';
import { slackError } from './slack-errors.js';
import { noteMessage, toolCardBlocks, toolCardText } from './blocks.js';
import { cardMetadata, slackCardIndex } from './card-index.js';
import { closeStaleStream } from './stale-stream.js';
import { hasIdentity, type SlackIdentity } from './post-identity.js';

export interface SlackSurfaceDeps {
  /** The thread's client (limited-client.ts: at most SLACK_CALLS_PER_THREAD calls in flight). */
  client: WebClient;
  records: Pick<ThreadRecords, 'cardPlace' | 'cardPosting' | 'cardPosted' | 'openAnswer' | 'setOpenAnswer'>;
  logger: EngineLogger;
  support: StreamingSupport;
  /** This bot's user id (auth.test): which replies in the thread are its own. */
  botUserId?: string;
  /** Agent sessions (the connector's one instance): the thread's status and Stop button, where the workspace has them. */
  agentSessions?: AgentSessions;
  /** What the DM status line rotates through while the bot works (LOADING_MESSAGES, or the defaults). */
  loadingMessages?: readonly string[];
  /** The name and icon the thread's client posts with (its place's profile), read when an answer starts. */
  identity?: () => SlackIdentity | undefined;
}

/** A workspace's streaming, declined for one answer (Slack's streams cannot carry a name or icon). */
const POSTED_AND_EDITED: StreamingSupport = { native: false };

const REACTION: Record<InputMark, string> = { received: 'eyes', taken: 'white_check_mark', dropped: 'x' };

/** On a channel thread's first message while its model call waits for a free slot. */
const WAITING_REACTION = 'hourglass_flowing_sand';

export class SlackSurface implements ThreadSurface {
  readonly platform = 'Slack';
  readonly cards: CardLocator;
  private readonly channel: string;
  private readonly threadTs: string;
  /** Slack took this thread's last status as its agent session's (so the session exists). */
  private inSession = false;
  /** The turn's last answer set the session back to active as its stream stopped: the idle call is not needed. */
  private idleSent = false;

  constructor(
    private readonly deps: SlackSurfaceDeps,
    private readonly session: SessionRecord,
  ) {
    this.channel = session.key.channel;
    this.threadTs = session.key.thread;
    this.cards = slackCardIndex(deps, session);
  }

  messageKey(ts: MessageId): string {
    return messageKey(this.channel, ts);
  }

  async postCard(card: CardView): Promise<MessageId | undefined> {
    const posted = await this.deps.client.chat.postMessage({
      channel: this.channel,
      thread_ts: this.threadTs,
      text: toolCardText(card.state),
      blocks: toolCardBlocks(card.state, card.prompt),
      // How card-index.ts recognises the card if this process dies before it records the ts.
      metadata: cardMetadata(card.state.toolCallId),
    });
    return posted.ts;
  }

  async updateCard(ts: MessageId, card: CardView): Promise<void> {
    await this.deps.client.chat.update({
      channel: this.channel,
      ts,
      text: toolCardText(card.state),
      blocks: toolCardBlocks(card.state, card.prompt),
    });
  }

  async postNote(note: ThreadNote): Promise<MessageId | undefined> {
    const { text, blocks } = noteMessage(note);
    const posted = await this.deps.client.chat.postMessage({
      channel: this.channel,
      thread_ts: this.threadTs,
      text,
      blocks,
    });
    return posted.ts;
  }

  startAnswer(): AnswerDraft {
    return new AnswerStream(
      this.deps.client,
      {
        channel: this.channel,
        threadTs: this.threadTs,
        ...(this.session.startedBy ? { recipientUserId: this.session.startedBy } : {}),
        ...(this.session.key.workspace ? { recipientTeamId: this.session.key.workspace } : {}),
      },
      {
        logger: this.deps.logger,
        // chat.startStream takes no username or icon: where the profile sets them, the answer is
        // posted and edited so it shows the same name and icon as the thread's other messages.
        // (A copy each time: answer-stream.ts sets `native` false on a workspace's refusal.)
        support: hasIdentity(this.deps.identity?.()) ? { ...POSTED_AND_EDITED } : this.deps.support,
        streaming: (answer) => this.deps.records.setOpenAnswer(this.session.id, answer),
        // The stop that ends a turn also sets its session back to active, saving a call.
        ...(this.inSession
          ? { turnEnd: { sessionStatus: 'active' as const, sent: () => (this.idleSent = true) } }
          : {}),
      },
    );
  }

  /**
   * The instance that owned this thread died mid-stream (cluster mode): stop its stream, which
   * Slack would otherwise show as still being written for minutes (stale-stream.ts).
   */
  async closeStaleAnswer(): Promise<void> {
    const open = await this.deps.records.openAnswer(this.session.id);
    if (!open) return;
    await closeStaleStream(
      this.deps.client,
      {
        channel: this.channel,
        threadTs: this.threadTs,
        ...(this.deps.botUserId ? { botUserId: this.deps.botUserId } : {}),
      },
      open,
    );
    await this.deps.records.setOpenAnswer(this.session.id, undefined);
  }

  async react(ts: MessageId, mark: InputMark): Promise<void> {
    await this.addReaction(ts, REACTION[mark]);
  }

  async unreact(ts: MessageId, mark: InputMark): Promise<void> {
    await this.removeReaction(ts, REACTION[mark]);
  }

  /**
   * The agent session's status where the workspace has sessions; else, in a DM (the app's
   * Messages tab), the native "is thinking…" status with its rotating loading messages.
   */
  async setStatus(status: WorkStatus, details?: StatusDetails): Promise<void> {
    const sessions = this.deps.agentSessions;
    if (status === 'idle' && this.idleSent) {
      this.idleSent = false;
      return;
    }
    this.idleSent = false;
    this.inSession = Boolean(
      sessions && (await sessions.setStatus(this.deps.client, this.sessionThread, status, details)),
    );
    // A DM (the Messages tab) also has a status line under the conversation: the words of the
    // work, LOADING_MESSAGES rotating, with or without a session (the session gives the Stop
    // button). A closed conversation's line simply stays clear; a session's idle needs none
    // (Slack clears the line when the bot replies).
    if (!this.isDm || status === 'closed') return;
    if (status === 'thinking') await this.setThreadStatus('is thinking…', this.deps.loadingMessages);
    else if (!this.inSession || status === 'waiting') await this.setThreadStatus('');
  }

  /** A DM thread says so in its status line; a channel thread gets an hourglass on its first message. */
  async showWaiting(ahead: number | null): Promise<void> {
    if (this.isDm)
      return this.setThreadStatus(ahead === null ? 'is thinking…' : `is waiting for a free slot (${ahead} ahead)…`);
    if (ahead === null) await this.removeReaction(this.threadTs, WAITING_REACTION);
    else await this.addReaction(this.threadTs, WAITING_REACTION);
  }

  private get isDm(): boolean {
    return this.channel.startsWith('D');
  }

  private get sessionThread(): SessionThread {
    return {
      sessionId: this.session.id,
      teamId: this.session.key.workspace,
      channel: this.channel,
      threadTs: this.threadTs,
    };
  }

  private async setThreadStatus(status: string, loadingMessages?: readonly string[]): Promise<void> {
    await this.deps.client.assistant.threads.setStatus({
      channel_id: this.channel,
      thread_ts: this.threadTs,
      status,
      ...(loadingMessages && loadingMessages.length > 0 ? { loading_messages: [...loadingMessages] } : {}),
    });
  }

  private async addReaction(ts: string, name: string): Promise<void> {
    try {
      await this.deps.client.reactions.add({ channel: this.channel, timestamp: ts, name });
    } catch (error) {
      if (slackError(error) !== 'already_reacted') throw error;
    }
  }

  private async removeReaction(ts: string, name: string): Promise<void> {
    try {
      await this.deps.client.reactions.remove({ channel: this.channel, timestamp: ts, name });
    } catch (error) {
      if (slackError(error) !== 'no_reaction') throw error;
    }
  }
}

/** The store key of a Slack message (a reaction or click on it finds its session). */
export function messageKey(channel: string, ts: string): string {
  return `slack:${channel}:${ts}`;
}
