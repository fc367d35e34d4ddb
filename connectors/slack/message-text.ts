// Slack message text as the model should read it: the bot's own mention removed, other
// people's mentions shown as names (`<@U123>` → `@ada`), channel links and URLs made
// readable, and Slack's three HTML entities decoded.
//
// The result is raw text, not mrkdwn: Slack sends what a user typed with `&lt; &gt; &amp;`
// escaped, and decoding them turns an inert `&lt;!channel&gt;` into a live `<!channel>`. That is
// right for the model (it reads what the person wrote), and wrong to echo as is: a reply that
// quotes it (`/model openai:<!channel>`) would ping the channel. The outbound guard
// (outbound-guard.ts) makes every broadcast inert on the way out; text echoed into mrkdwn
// should still be escaped (escapeSlackText) so its other `<…>` stay text too.

/** The user ids mentioned in a message, in order, without duplicates. */
export function mentionedUsers(text: string): string[] {
  return [...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((match) => match[1]!))];
}

export function readableText(text: string, botUserId: string, names: ReadonlyMap<string, string>): string {
  return text
    .replace(new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, 'g'), '')
    .replace(
      /<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g,
      (_m, id: string, label?: string) => `@${names.get(id) ?? label ?? id}`,
    )
    .replace(/<#([CG][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, name?: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_m, label?: string) => label || '@group')
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
