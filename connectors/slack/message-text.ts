// Slack message text as the model should read it: the bot's own mention removed, other
// people's mentions shown as names (`<@U123>` → `@ada`), channel links and URLs made
// readable, and Slack's three HTML entities decoded.

/** The user ids mentioned in a message, in order, without duplicates. */
export function mentionedUsers(text: string): string[] {
  return [...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((match) => match[1]!))];
}

export function readableText(text: string, botUserId: string, names: ReadonlyMap<string, string>): string {
  return text
    .replace(new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, 'g'), '')
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => `@${names.get(id) ?? label ?? id}`)
    .replace(/<#([CG][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, name?: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<(https?:\/\/[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<(https?:\/\/[^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** A thread command: a mention whose text starts with `/word` (`@bot /model openai:gpt-4.1`). */
export function threadCommand(text: string): { name: string; args: string[] } | undefined {
  const match = /^\/([a-z]+)\b\s*(.*)$/is.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), args: match[2]!.trim() ? match[2]!.trim().split(/\s+/) : [] };
}
