// Whether a message that reached the bot is the bot's to answer, the same rule on every
// platform: never a bot's (its own posts included), always a DM or a mention, and a plain
// reply only in a thread the bot works in (the session layer knows which). Each check is a
// small predicate; a platform says what its event is (what counts as a DM, a mention, a
// thread reply is its own) and composes them with `isForTheBot`.

/** The author is a bot, a webhook, or this bot itself: such a message never starts or steers a turn. */
export function isFromBotOrItself(
  author: { id: string; bot?: boolean; webhook?: boolean },
  botUserId: string,
): boolean {
  return author.bot === true || author.webhook === true || author.id === botUserId;
}

/** The text names the bot with the `<@id>` mention markup both Slack and Discord use. */
export function mentionsBotInText(text: string, botUserId: string): boolean {
  return botUserId !== '' && text.includes(`<@${botUserId}`);
}

/** What a platform says of one inbound message, for `isForTheBot`. */
export interface InboundPlace {
  /** A direct message to the bot: always its to answer. */
  directMessage: boolean;
  /** The message mentions the bot (and this event is the one that carries the mention). */
  mentioned: boolean;
  /** A reply in a thread, not a thread's first message. */
  threadReply: boolean;
  /** The same message reaches the bot as a mention event too, which carries it (Slack): one message is one thing, never two. */
  duplicateOfMention?: boolean;
}

/** Whether the bot answers this message: a DM or a mention, or a reply in a thread that is ours. */
export async function isForTheBot(place: InboundPlace, threadIsOurs: () => Promise<boolean>): Promise<boolean> {
  if (place.directMessage || place.mentioned) return true;
  if (!place.threadReply || place.duplicateOfMention) return false;
  return threadIsOurs();
}
