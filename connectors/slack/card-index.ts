// Where each tool call's card is in Slack, so a card is updated in place across restarts
// and never posted twice: the shared write-ahead index (shared/write-ahead-cards.ts), with
// Slack's way to recover a post the index cannot name.
//
// A process killed between "posting" and "posted" leaves a card in Slack that the index
// cannot name; the next process looks for it in the thread, by the tool call id the card
// carries in its message metadata, among the replies posted since the mark (so one short
// page is enough: `conversations.replies` is 1 request a minute and 15 messages a page for
// apps outside the Marketplace). Without the mark there is no lookup at all.
import type { WebClient } from '@slack/web-api';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord, ThreadRecords } from '../../src/sessions/thread-records.js';
import type { CardLocator } from '../shared/thread-surface.js';
import { WriteAheadCards } from '../shared/write-ahead-cards.js';

export const CARD_METADATA_EVENT = 'agent_tool_card';

export interface CardIndexDeps {
  client: WebClient;
  records: Pick<ThreadRecords, 'cardPlace' | 'cardPosting' | 'cardPosted'>;
  logger: EngineLogger;
}

/** The thread's cards, found again after a restart by the metadata each card carries. */
export function slackCardIndex(deps: CardIndexDeps, session: SessionRecord): CardLocator {
  return new WriteAheadCards({
    records: deps.records,
    sessionId: session.id,
    keyPrefix: 'slack-card',
    recover: (toolCallId, since) => searchThread(deps, session, toolCallId, since),
  });
}

/** The metadata a card carries, so a process after this one can recognise it in the thread. */
export function cardMetadata(toolCallId: string): { event_type: string; event_payload: { tool_call_id: string } } {
  return { event_type: CARD_METADATA_EVENT, event_payload: { tool_call_id: toolCallId } };
}

async function searchThread(
  deps: CardIndexDeps,
  session: SessionRecord,
  toolCallId: string,
  since: number,
): Promise<string | undefined> {
  try {
    const page = await deps.client.conversations.replies({
      channel: session.key.channel,
      ts: session.key.thread,
      // A little before the mark: clocks differ, and ts is Slack's.
      oldest: ((since - 10_000) / 1000).toFixed(6),
      include_all_metadata: true,
      limit: 15,
    });
    const card = (page.messages ?? []).find((message) => {
      const metadata = (message as { metadata?: { event_type?: string; event_payload?: { tool_call_id?: unknown } } })
        .metadata;
      return metadata?.event_type === CARD_METADATA_EVENT && metadata.event_payload?.tool_call_id === toolCallId;
    });
    return card?.ts;
  } catch (error) {
    // Rate-limited or gone: a second card is the lesser harm than none.
    deps.logger.warn(
      { err: error, sessionId: session.id, toolCallId },
      'could not look for a card posted before a restart',
    );
    return undefined;
  }
}
