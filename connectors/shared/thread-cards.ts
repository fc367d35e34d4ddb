// The tool cards of one thread, for the thread presenter: one card per tool call, posted once
// and updated in place as the call moves through its phases, with a prompt's buttons on the
// card of the call that asks, and the decision (who clicked what) once it is made.
//
// The idea to hold: a card's state is a fold over the engine's events (tool-card.ts) plus the
// decisions only the connector sees (clicks). A decision can arrive before its card is known
// here: after a restart, a click on a card posted by the previous process resumes the turn,
// which then proposes the call again; the decision waits for that and is shown on the card.
// A card that exists on the platform but not in memory is found again (CardLocator), never
// posted twice.
import type { EventOf, InboxItem } from '../../src/engine/index.js';
import type { CallText } from './call-arguments.js';
import { applyToolEvent, newToolCard, recordDecision, type ToolCardState } from './tool-card.js';
import type { ThreadOutput } from './thread-output.js';
import type { CardPrompt, MessageId } from './thread-surface.js';

interface Card {
  state: ToolCardState;
  messageId: MessageId | undefined;
  prompt?: CardPrompt;
  /**
   * The card's surface calls, one at a time, each showing the card as it is by then: a click
   * (decide) and the turn's events cannot race into two posts of one card, or leave an older
   * state on screen.
   */
  rendering: Promise<void>;
}

export class ThreadCards {
  private readonly cards = new Map<string, Card>();
  /** Decisions clicked before their card is known here (after a restart the resumed turn shows it again). */
  private readonly decisions = new Map<string, { by: string; choice: string }>();

  constructor(
    private readonly output: ThreadOutput,
    /** GRANT_SCOPE, for the words of "always" buttons. */
    private readonly grantScope?: 'thread' | 'channel',
  ) {}

  /** The full text of a card's call as it was drawn (for Show all), if this thread has it. */
  fullTextOf(toolCallId: string): CallText | undefined {
    const state = this.cards.get(toolCallId)?.state;
    return state?.fullArguments ? { name: state.name, parts: state.fullArguments } : undefined;
  }

  /**
   * The model proposed a call. A call proposed again (resumed, or shown again after a restart)
   * already has its card, in memory or on the platform: it keeps its message and the decision
   * it shows, and is not set back to "Pending" (the event that follows says where it stands).
   */
  async proposed(event: EventOf<'tool_proposed'>): Promise<void> {
    const known = this.cards.get(event.toolCallId);
    const card: Card = known ?? {
      state: newToolCard(event),
      messageId: await this.output.surface.cards.find(event.toolCallId),
      rendering: Promise.resolve(),
    };
    const decision = known?.state.decision ?? this.decisions.get(event.toolCallId);
    card.state = decision ? recordDecision(newToolCard(event), decision.by, decision.choice) : newToolCard(event);
    card.prompt = undefined;
    this.decisions.delete(event.toolCallId);
    this.cards.set(event.toolCallId, card);
    if (!card.messageId) await this.render(card);
  }

  /** Whether this call has a card (compact mode: only calls that asked a person get one). */
  has(toolCallId: string): boolean {
    return this.cards.has(toolCallId);
  }

  /**
   * Compact mode: a call shown as a step asks a person, so it gets a card after all. Its
   * proposal is taken in without drawing anything: the card is posted once, with the ask.
   */
  async adopt(event: EventOf<'tool_proposed'>): Promise<void> {
    if (this.cards.has(event.toolCallId)) return;
    const decision = this.decisions.get(event.toolCallId);
    this.decisions.delete(event.toolCallId);
    const state = decision ? recordDecision(newToolCard(event), decision.by, decision.choice) : newToolCard(event);
    this.cards.set(event.toolCallId, {
      state,
      messageId: await this.output.surface.cards.find(event.toolCallId),
      rendering: Promise.resolve(),
    });
  }

  /** A call asks a human (approval, question, plan, directory): the prompt's buttons go on its card. */
  async asked(
    event: EventOf<'permission_required'> | EventOf<'interaction_required'>,
    prompt: InboxItem | undefined,
  ): Promise<void> {
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
        ...(this.grantScope ? { grantScope: this.grantScope } : {}),
      };
    }
    await this.render(card);
  }

  /** A call started or finished. A prompt still open when its call was stopped says it was closed. */
  async progressed(event: EventOf<'tool_started'> | EventOf<'tool_finished'>): Promise<void> {
    const card = await this.cardFor(event.toolCallId, event.name);
    card.state = applyToolEvent(card.state, event);
    if (event.type === 'tool_finished') {
      if (card.prompt?.item.state === 'pending' && event.status === 'interrupted')
        card.state = recordDecision(card.state, '', 'interrupted');
      card.prompt = undefined;
    }
    await this.render(card);
  }

  /** A click resolved a prompt: the card shows the decision and who made it; the buttons go. */
  async decided(item: InboxItem, userId: string, choice: string): Promise<void> {
    const card = this.cards.get(item.toolCallId);
    if (!card) {
      // After a restart: the click resumes the turn, which shows the card again, with this.
      this.decisions.set(item.toolCallId, { by: userId, choice });
      return;
    }
    // Already shown (cluster mode: the clicking instance and then the owner both report it).
    if (!card.prompt && card.state.decision?.by === userId && card.state.decision.choice === choice) return;
    card.prompt = undefined;
    card.state = recordDecision(card.state, userId, choice);
    await this.render(card);
  }

  /** A prompt closed without a click (a reply declined it, a stop closed it). */
  async closed(item: InboxItem): Promise<void> {
    const card = this.cards.get(item.toolCallId);
    if (!card) return;
    card.prompt = undefined;
    const choice = item.resolution?.kind === 'interrupted' ? 'interrupted' : 'replied';
    card.state = recordDecision(card.state, item.resolvedBy ?? '', choice);
    await this.render(card);
  }

  private async cardFor(toolCallId: string, name: string): Promise<Card> {
    let card = this.cards.get(toolCallId);
    if (!card) {
      // After a restart the card exists on the platform but not in memory: find its message.
      card = {
        state: newToolCard({ type: 'tool_proposed', toolCallId, name, arguments: {} }),
        messageId: await this.output.surface.cards.find(toolCallId),
        rendering: Promise.resolve(),
      };
      this.cards.set(toolCallId, card);
    }
    return card;
  }

  /** Post the card, or update it once posted: in order, after the card's earlier calls. */
  private render(card: Card): Promise<void> {
    card.rendering = card.rendering.then(() => this.draw(card));
    return card.rendering;
  }

  private async draw(card: Card): Promise<void> {
    const { surface } = this.output;
    const view = { state: card.state, ...(card.prompt ? { prompt: card.prompt } : {}) };
    const messageId = card.messageId;
    if (messageId) return this.output.safely('update a tool card', () => surface.updateCard(messageId, view));
    const toolCallId = card.state.toolCallId;
    await this.output.safely('post a tool card', async () => {
      // Written ahead: a process that dies between the post and `posted` leaves a mark the next one follows.
      await surface.cards.posting(toolCallId);
      card.messageId = await surface.postCard(view);
      if (card.messageId) {
        await surface.cards.posted(toolCallId, card.messageId);
        await this.output.remember(card.messageId, 'tool_card', toolCallId);
      }
    });
  }
}
