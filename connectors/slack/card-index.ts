// Where each tool call's card is in Slack, so a card is updated in place across restarts
// and never posted twice.
//
// The index is written ahead: "posting" before `chat.postMessage`, the message's ts after.
// A process killed between the two leaves a card in Slack that the index cannot name; the
// next process sees the "posting" mark and looks for it in the thread, by the tool call id
// the card carries in its message metadata, among the replies posted since the mark (so
// one short page is enough: `conversations.replies` is 1 request a minute and 15 messages a
// page for apps outside the Marketplace). Without the mark there is no lookup at all.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord, ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CardLocator } from '../shared/thread-surface.js';

export const CARD_METADATA_EVENT = 'agent_tool_card';

export interface CardIndexDeps {
  client: WebClient;
  records: Pick<ThreadRecords, 'cardPlace' | 'cardPosting' | 'cardPosted'>;
  logger: EngineLogger;
}

export class CardIndex implements CardLocator {
  private readonly channel: string;
  private readonly threadTs: string;

  constructor(
    private readonly deps: CardIndexDeps,
    private readonly session: SessionRecord,
  ) {
    this.channel = session.key.channel;
    this.threadTs = session.key.thread;
  }

  /** The ts of the call's card, if one was posted (here or in a process before this one). */
  async find(toolCallId: string): Promise<string | undefined> {
    const place = await this.deps.records.cardPlace(this.key(toolCallId));
    if (place?.messageId !== undefined) return place.messageId;
    if (place === undefined) return undefined;
    const ts = await this.search(toolCallId, place.postingAt);
    if (ts) await this.posted(toolCallId, ts);
    return ts;
  }

  /** Call right before posting the card. */
  async posting(toolCallId: string): Promise<void> {
    await this.deps.records.cardPosting(this.key(toolCallId), this.session.id, toolCallId);
  }

  /** Call once the card is posted. */
  async posted(toolCallId: string, ts: string): Promise<void> {
    await this.deps.records.cardPosted(this.key(toolCallId), this.session.id, toolCallId, ts);
  }

  /** The metadata a card carries, so `search` can recognise it. */
  static metadata(toolCallId: string): { event_type: string; event_payload: { tool_call_id: string } } {
    return { event_type: CARD_METADATA_EVENT, event_payload: { tool_call_id: toolCallId } };
  }

  private async search(toolCallId: string, since: number): Promise<string | undefined> {
    try {
      const page = await this.deps.client.conversations.replies({
        channel: this.channel,
        ts: this.threadTs,
        // A little before the mark: clocks differ, and ts is Slack's.
        oldest: ((since - 10_000) / 1000).toFixed(6),
        include_all_metadata: true,
        limit: 15,
      });
      const card = (page.messages ?? []).find((message) => {
        const metadata = (message as { metadata?: { event_type?: string; event_payload?: { tool_call_id?: unknown } } }).metadata;
        return metadata?.event_type === CARD_METADATA_EVENT && metadata.event_payload?.tool_call_id === toolCallId;
      });
      return card?.ts;
    } catch (error) {
      // Rate-limited or gone: a second card is the lesser harm than none.
      this.deps.logger.warn({ err: error, sessionId: this.session.id, toolCallId }, 'could not look for a card posted before a restart');
      return undefined;
    }
  }

  private key(toolCallId: string): string {
    return `slack-card:${this.session.id}:${toolCallId}`;
  }
}
