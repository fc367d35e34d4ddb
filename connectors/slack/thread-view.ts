// What one thread shows while the bot works in it. The view consumes the session layer's
// reports (engine events, message dispositions, closed prompts) and turns them into Slack
// calls: the answer streams as one message per text segment, every tool call is its own
// message updated in place, a prompt's buttons live on its tool's card, and the turn ends
// with a note when it was stopped, failed or ran out of steps.
//
// A Slack call that fails is logged and the turn goes on: the conversation is the source
// of truth, the thread is its rendering.
import type { WebClient } from '@slack/web-api';
import type { EngineEvent, EngineLogger, InboxItem, MessageSource, Usage } from '../../src/engine/index.js';
import type { InputDisposition } from '../../src/sessions/session-manager.js';
import type { SessionRecord, SessionStore } from '../../src/store/session-store.js';
import { applyToolEvent, formatUsage, newToolCard, recordDecision, type ToolCardState } from '../shared/index.js';
import type { CallText } from '../shared/call-arguments.js';
import { AnswerStream, type StreamingSupport } from './answer-stream.js';
import { CardIndex } from './card-index.js';
import { escape, footerBlock, noteBlocks, toolCardBlocks, toolCardText, type CardPrompt } from './blocks.js';

export interface ThreadViewDeps {
  client: WebClient;
  store: SessionStore;
  logger: EngineLogger;
  support: StreamingSupport;
  /** GRANT_SCOPE, for the words of "always" buttons. */
  grantScope?: 'thread' | 'channel';
}

interface Card {
  state: ToolCardState;
  ts: string | undefined;
  prompt?: CardPrompt;
  /**
   * The card's Slack calls, one at a time, each showing the card as it is by then: a click
   * (onDecision) and the turn's events cannot race into two posts of one card, or leave an
   * older state on screen.
   */
  rendering: Promise<void>;
}

const REACTION = { received: 'eyes', injected: 'white_check_mark', dropped: 'x' } as const;

/** On a channel thread's first message while its model call waits for a free slot. */
export const WAITING_REACTION = 'hourglass_flowing_sand';

export class ThreadView {
  private stream: AnswerStream | undefined;
  private readonly cards = new Map<string, Card>();
  /** Decisions clicked before their card is known here (after a restart the resumed turn shows it again). */
  private readonly decisions = new Map<string, { by: string; choice: string }>();
  private usages: Usage[] = [];
  private stoppedBy: string | undefined;
  private readonly channel: string;
  private readonly threadTs: string;
  private readonly cardIndex: CardIndex;

  constructor(
    private readonly deps: ThreadViewDeps,
    private readonly session: SessionRecord,
  ) {
    this.channel = session.key.channel;
    this.threadTs = session.key.thread;
    this.cardIndex = new CardIndex(deps, session);
  }

  /** Who reacted with 🛑, so the note can say it. */
  noteStoppedBy(userId: string): void {
    this.stoppedBy = userId;
  }

  /** The full text of a card's call as this view drew it (for Show all), if it has it. */
  fullTextOf(toolCallId: string): CallText | undefined {
    const state = this.cards.get(toolCallId)?.state;
    return state?.fullArguments ? { name: state.name, parts: state.fullArguments } : undefined;
  }

  async onEvent(event: EngineEvent, prompt?: InboxItem): Promise<void> {
    switch (event.type) {
      case 'turn_start':
        this.usages = [];
        this.stoppedBy = undefined;
        await this.setThinking(true);
        return;
      case 'assistant_delta':
        this.answer().push(event.text);
        return;
      case 'assistant_message':
        if (event.usage) this.usages.push(event.usage);
        if (event.toolCalls.length > 0) await this.endAnswer();
        return;
      case 'tool_proposed': {
        // A call proposed again (resumed, or shown again after a restart) already has its
        // card: in memory, or in Slack. It keeps its message and the decision it shows.
        const known = this.cards.get(event.toolCallId);
        const card: Card = known ?? { state: newToolCard(event), ts: await this.cardIndex.find(event.toolCallId), rendering: Promise.resolve() };
        const decision = known?.state.decision ?? this.decisions.get(event.toolCallId);
        card.state = decision ? recordDecision(newToolCard(event), decision.by, decision.choice) : newToolCard(event);
        card.prompt = undefined;
        this.decisions.delete(event.toolCallId);
        this.cards.set(event.toolCallId, card);
        // An existing card is not set back to "Pending": the event that follows says where the call stands.
        if (!card.ts) await this.render(card);
        return;
      }
      case 'permission_required':
      case 'interaction_required': {
        // A stream must not stay open while a human decides: it would die after ~5 minutes.
        await this.endAnswer();
        const card = await this.cardFor(event.toolCallId, event.type === 'permission_required' ? event.name : event.kind);
        card.state = applyToolEvent(card.state, event);
        // A question or a plan is shown in full on the card: its raw arguments would repeat it.
        if (event.type === 'interaction_required') card.state = { ...card.state, argsSummary: '' };
        if (prompt) {
          const args = event.arguments as { question?: string; plan?: string };
          card.prompt = {
            item: prompt,
            ...(args.question ? { question: args.question } : {}),
            ...(args.plan ? { plan: args.plan } : {}),
            ...(this.deps.grantScope ? { grantScope: this.deps.grantScope } : {}),
          };
        }
        await this.render(card);
        return;
      }
      case 'tool_started':
      case 'tool_finished': {
        const card = await this.cardFor(event.toolCallId, event.name);
        card.state = applyToolEvent(card.state, event);
        if (event.type === 'tool_finished') {
          if (card.prompt?.item.state === 'pending' && event.status === 'interrupted') card.state = recordDecision(card.state, '', 'interrupted');
          card.prompt = undefined;
        }
        await this.render(card);
        return;
      }
      case 'tool_calls_limited':
        await this.post(
          noteBlocks(`:warning: The model asked for ${event.requested} tool calls at once; only the first ${event.allowed} run (MAX_TOOL_CALLS_PER_RESPONSE). It was told to send fewer.`),
          `Only ${event.allowed} of ${event.requested} tool calls run`,
        );
        return;
      case 'error':
        await this.endAnswer();
        await this.post(noteBlocks(`:warning: ${escape(event.message)}`, { label: 'Retry', sessionId: this.session.id }), `Error: ${event.message}`);
        return;
      case 'interrupted':
        await this.endAnswer();
        await this.post(noteBlocks(this.stoppedBy ? `:octagonal_sign: Stopped by <@${this.stoppedBy}>.` : ':octagonal_sign: Stopped.'), 'Stopped');
        return;
      case 'turn_end': {
        const footer = this.usages.length > 0 ? [footerBlock(formatUsage(this.usages))] : [];
        await this.endAnswer(footer);
        if (event.status === 'max_iterations_exceeded') {
          await this.post(
            noteBlocks(`:hourglass: I used the ${event.iterations} model calls allowed for one request. Continue?`, { label: 'Continue', sessionId: this.session.id }),
            'Reached the step limit',
          );
        }
        await this.setThinking(false);
        return;
      }
      default:
        return;
    }
  }

  /** A click resolved a prompt: show the decision and who made it; the buttons go. */
  async onDecision(item: InboxItem, userId: string, choice: string): Promise<void> {
    const card = this.cards.get(item.toolCallId);
    if (!card) {
      // After a restart: the click resumes the turn, which shows the card again, with this.
      this.decisions.set(item.toolCallId, { by: userId, choice });
      return;
    }
    card.prompt = undefined;
    card.state = recordDecision(card.state, userId, choice);
    await this.render(card);
  }

  /** A prompt closed without a click (a reply declined it, a stop closed it). */
  async onPromptClosed(item: InboxItem): Promise<void> {
    const card = this.cards.get(item.toolCallId);
    if (!card) return;
    card.prompt = undefined;
    const choice = item.resolution?.kind === 'interrupted' ? 'interrupted' : 'replied';
    card.state = recordDecision(card.state, item.resolvedBy ?? '', choice);
    await this.render(card);
  }

  /** A reaction on the person's message says what became of it. */
  async onInput(disposition: InputDisposition, source: MessageSource | undefined): Promise<void> {
    const ts = source?.messageId;
    if (!ts) return;
    switch (disposition) {
      case 'started':
      case 'queued':
        await this.react(ts, REACTION.received);
        return;
      case 'injected':
      case 'answered':
        await this.react(ts, REACTION.injected);
        return;
      case 'dropped':
        await this.unreact(ts, REACTION.received);
        await this.react(ts, REACTION.dropped);
        return;
    }
  }

  // ---- pieces ------------------------------------------------------------------------

  private answer(): AnswerStream {
    this.stream ??= new AnswerStream(
      this.deps.client,
      {
        channel: this.channel,
        threadTs: this.threadTs,
        ...(this.session.startedBy ? { recipientUserId: this.session.startedBy } : {}),
        ...(this.session.key.workspace ? { recipientTeamId: this.session.key.workspace } : {}),
      },
      { logger: this.deps.logger, support: this.deps.support },
    );
    return this.stream;
  }

  private async endAnswer(footer: ReturnType<typeof footerBlock>[] = []): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (!stream) return;
    await this.safely('finish the answer', () => stream.finish(footer));
    for (const ts of stream.messages) await this.remember(ts, 'answer');
  }

  private async cardFor(toolCallId: string, name: string): Promise<Card> {
    let card = this.cards.get(toolCallId);
    if (!card) {
      // After a restart the card exists in Slack but not in memory: find its message.
      card = { state: newToolCard({ type: 'tool_proposed', toolCallId, name, arguments: {} }), ts: await this.cardIndex.find(toolCallId), rendering: Promise.resolve() };
      this.cards.set(toolCallId, card);
    }
    return card;
  }

  private async postCard(toolCallId: string, card: Card): Promise<void> {
    await this.safely('post a tool card', async () => {
      await this.cardIndex.posting(toolCallId);
      const posted = await this.deps.client.chat.postMessage({
        channel: this.channel,
        thread_ts: this.threadTs,
        text: toolCardText(card.state),
        blocks: toolCardBlocks(card.state, card.prompt),
        metadata: CardIndex.metadata(toolCallId),
      });
      card.ts = posted.ts;
      if (posted.ts) {
        await this.cardIndex.posted(toolCallId, posted.ts);
        await this.remember(posted.ts, 'tool_card', toolCallId);
      }
    });
  }

  /** Post the card, or update it once posted: in order, after the card's earlier calls. */
  private render(card: Card): Promise<void> {
    card.rendering = card.rendering.then(() => this.updateCard(card));
    return card.rendering;
  }

  private async updateCard(card: Card): Promise<void> {
    if (!card.ts) return this.postCard(card.state.toolCallId, card);
    const ts = card.ts;
    await this.safely('update a tool card', () =>
      this.deps.client.chat.update({ channel: this.channel, ts, text: toolCardText(card.state), blocks: toolCardBlocks(card.state, card.prompt) }),
    );
  }

  private async post(blocks: ReturnType<typeof noteBlocks>, text: string): Promise<void> {
    await this.safely('post a note', async () => {
      const posted = await this.deps.client.chat.postMessage({ channel: this.channel, thread_ts: this.threadTs, text, blocks });
      if (posted.ts) await this.remember(posted.ts, 'note');
    });
  }

  /** Every bot message is indexed, so a 🛑 on any of them finds the session. */
  private async remember(ts: string, kind: string, toolCallId?: string): Promise<void> {
    await this.safely('index a message', () =>
      this.deps.store.putMessageRef(messageKey(this.channel, ts), { sessionId: this.session.id, kind, ...(toolCallId ? { toolCallId } : {}) }),
    );
  }

  /** In a DM (the app's Messages tab) Slack shows a native "is thinking…" status. */
  /**
   * The model call waits for a free slot (MAX_CONCURRENT_MODEL_CALLS), `ahead` in front of
   * it, or got one (null). A DM thread says so in its status line; a channel thread gets an
   * hourglass on its first message while it waits.
   */
  async onWaiting(ahead: number | null): Promise<void> {
    if (this.channel.startsWith('D')) {
      const status = ahead === null ? 'is thinking…' : `is waiting for a free slot (${ahead} ahead)…`;
      await this.safely('set the thread status', () => this.deps.client.assistant.threads.setStatus({ channel_id: this.channel, thread_ts: this.threadTs, status }));
      return;
    }
    if (ahead === null) await this.unreact(this.threadTs, WAITING_REACTION);
    else await this.react(this.threadTs, WAITING_REACTION);
  }

  private async setThinking(on: boolean): Promise<void> {
    if (!this.channel.startsWith('D')) return;
    await this.safely('set the thread status', () =>
      this.deps.client.assistant.threads.setStatus({ channel_id: this.channel, thread_ts: this.threadTs, status: on ? 'is thinking…' : '' }),
    );
  }

  private async react(ts: string, name: string): Promise<void> {
    await this.safely('add a reaction', async () => {
      try {
        await this.deps.client.reactions.add({ channel: this.channel, timestamp: ts, name });
      } catch (error) {
        if ((error as { data?: { error?: string } }).data?.error !== 'already_reacted') throw error;
      }
    });
  }

  private async unreact(ts: string, name: string): Promise<void> {
    await this.safely('remove a reaction', async () => {
      try {
        await this.deps.client.reactions.remove({ channel: this.channel, timestamp: ts, name });
      } catch (error) {
        if ((error as { data?: { error?: string } }).data?.error !== 'no_reaction') throw error;
      }
    });
  }

  private async safely(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.deps.logger.warn({ err: error, sessionId: this.session.id }, `could not ${what} in Slack`);
    }
  }
}

/** The store key of a platform message (a reaction or click on it finds its session). */
export function messageKey(channel: string, ts: string): string {
  return `slack:${channel}:${ts}`;
}
