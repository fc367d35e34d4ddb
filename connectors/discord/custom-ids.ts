// What a Discord button carries in its custom id. Buttons are stateless, as in Slack
// (slack/actions.ts): the id names the kind of click and holds only ids and the choice, so a
// card posted before a restart still works after it. Discord's limit: a custom id is at most
// 100 characters, and unique within its message.
//   p:<item id>:<choice>   answer a prompt (approve, deny, a question's option, …)
//   p:<item id>#<index>    the same, for a choice too long to fit (a question's option): the
//                          click handler reads the item's choices from the store
//   r:<session id>         Retry / Continue: run the thread's last request again
//   v:<item id>            Show all: every character of a long call, in a private message
//                          that carries the approve buttons (shared/approval-view.ts)
//   f:<item id>:<choice>   answer a prompt from that private message (the click handler also
//                          checks the message it came from is the bot's private one)
//   t:up / t:down          👍 / 👎 under a final answer (answer-feedback.ts): which answer is
//                          the clicked message's, never anything the id carries
//   t:why                  the modal a 👎 opens, for its optional reason
import { z } from 'zod';

/** @internal */
export const CUSTOM_ID_MAX = 100;

export type ButtonAction =
  | { kind: 'prompt'; item: string; choice: string }
  | { kind: 'prompt_index'; item: string; index: number }
  | { kind: 'retry'; session: string }
  | { kind: 'show_all'; item: string }
  | { kind: 'full_prompt'; item: string; choice: string }
  | { kind: 'feedback'; value: 'up' | 'down' };

/** The 👍 / 👎 buttons under a final answer. */
export const FEEDBACK_CUSTOM_ID = { up: 't:up', down: 't:down' } as const;
/** The modal a 👎 opens, and its one text input. */
export const FEEDBACK_REASON_MODAL_ID = 't:why';
export const FEEDBACK_REASON_INPUT_ID = 'reason';

/** The custom id of a prompt's button, or undefined when even the short form would not fit. */
export function promptCustomId(itemId: string, choice: string, index: number): string | undefined {
  const full = `p:${itemId}:${choice}`;
  if (full.length <= CUSTOM_ID_MAX) return full;
  const short = `p:${itemId}#${index}`;
  return short.length <= CUSTOM_ID_MAX ? short : undefined;
}

export function retryCustomId(sessionId: string): string | undefined {
  const id = `r:${sessionId}`;
  return id.length <= CUSTOM_ID_MAX ? id : undefined;
}

/** The custom id of a card's Show all button, or undefined when it would not fit. */
export function showAllCustomId(itemId: string): string | undefined {
  const id = `v:${itemId}`;
  return id.length <= CUSTOM_ID_MAX ? id : undefined;
}

/** The custom id of a button in the Show all message (approval choices are short: no index form). */
export function fullPromptCustomId(itemId: string, choice: string): string | undefined {
  const id = `f:${itemId}:${choice}`;
  return id.length <= CUSTOM_ID_MAX ? id : undefined;
}

const ItemId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

/** The action a clicked button's custom id names, or undefined for one that is not ours. */
export function readCustomId(customId: string): ButtonAction | undefined {
  if (customId === FEEDBACK_CUSTOM_ID.up) return { kind: 'feedback', value: 'up' };
  if (customId === FEEDBACK_CUSTOM_ID.down) return { kind: 'feedback', value: 'down' };
  if (customId.startsWith('r:')) {
    const session = customId.slice(2);
    return session ? { kind: 'retry', session } : undefined;
  }
  if (customId.startsWith('v:')) {
    const item = customId.slice(2);
    return ItemId.safeParse(item).success ? { kind: 'show_all', item } : undefined;
  }
  if (customId.startsWith('f:')) {
    const [item, choice] = [customId.slice(2, customId.indexOf(':', 2)), customId.slice(customId.indexOf(':', 2) + 1)];
    return customId.indexOf(':', 2) > 2 && ItemId.safeParse(item).success && choice
      ? { kind: 'full_prompt', item, choice }
      : undefined;
  }
  if (!customId.startsWith('p:')) return undefined;
  const rest = customId.slice(2);
  const indexed = /^([^:#]+)#(\d{1,3})$/.exec(rest);
  if (indexed && ItemId.safeParse(indexed[1]).success)
    return { kind: 'prompt_index', item: indexed[1]!, index: Number(indexed[2]) };
  const colon = rest.indexOf(':');
  if (colon <= 0) return undefined;
  const item = rest.slice(0, colon);
  const choice = rest.slice(colon + 1);
  if (!ItemId.safeParse(item).success || !choice) return undefined;
  return { kind: 'prompt', item, choice };
}
