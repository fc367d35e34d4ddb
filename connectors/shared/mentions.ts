// Mass mentions made inert: nothing the bot posts may ping a whole channel, workspace, user
// group or role, whoever wrote the text (the model, a tool's output, a user's words echoed
// back, a model name). The rule is about text and the same for every platform; each connector
// applies it at the one place all of its outgoing calls pass (Slack: `slack/outbound-guard.ts`).
// Individual user mentions (`<@U123>`, `<@123>`) stay: pinging one person is a feature.
//
// How a broadcast is made inert depends on how the field is read (its dialect):
// - Slack mrkdwn (message `text`, `mrkdwn` text objects, attachments): the token's brackets
//   become `&lt;` / `&gt;`, Slack's own escape, so it shows as the literal `<!channel>`. An
//   already escaped `&lt;!channel&gt;` is left as it is: in mrkdwn that is just text.
// - Slack markdown (`markdown_text` of chat.*Stream, `markdown` blocks) and plain text: an
//   entity there may be decoded before Slack looks for mentions (CommonMark decodes `&lt;` and
//   `&#60;`), so a word joiner (U+2060, invisible, zero width) goes right after the `<`, raw or
//   spelled as an entity: `<⁠!channel>` looks the same and matches no mention syntax.
// - The words `@channel`, `@here`, `@everyone` (Slack links them in markdown and with
//   `link_names`; Discord pings `@everyone` and `@here` in any text): a word joiner after `@`.
//   Not inside a URL (`https://mastodon.social/@here` must keep working) and not in an e-mail
//   address (`ops@here.example`), where no platform reads them as a broadcast.
// - Discord role mentions `<@&id>`: a word joiner after `<@&`. The Discord connector sends
//   `allowed_mentions: { parse: [] }` too; this is the second lock.
// Code spans and blocks are treated like prose: a joiner there is invisible and harmless,
// and telling code from prose here would be a second parser to get wrong.
//
// Every rewrite is idempotent (a neutralised text has nothing left to match), so a retried
// request, or text that passes the rule twice, is not changed again.
//
// A streamed answer reaches Slack in pieces it concatenates (chat.appendStream), and a piece
// can end inside a broadcast (`… <!cha` + `nnel> …`) that neither piece shows whole. A piece
// marked `continued` that ends with the beginning of one gets a word joiner at its end, so
// whatever comes next cannot complete it (`<!cha⁠nnel>`, `@⁠here`).

export type MentionDialect = 'slack-mrkdwn' | 'slack-markdown' | 'slack-plain' | 'discord';

/** U+2060 WORD JOINER: zero width, no line break opportunity, invisible in every client. */
export const WORD_JOINER = '\u2060';

/** Slack's special mentions that reach more than one person (`group` is the old name of `channel`). */
const SLACK_BROADCAST = '!(?:channel|here|everyone|group|subteam\\^)';
/** mrkdwn: a broadcast token, up to its closing bracket on the same line. */
const SLACK_TOKEN = new RegExp(`<(?=${SLACK_BROADCAST})([^<>\\n]*)(>?)`, 'gi');
/** markdown / plain: the `<` of a broadcast, raw or as an entity a markdown renderer decodes. */
const SLACK_OPENER = new RegExp(`(<|&lt;|&#0*60;|&#x0*3c;)(?=${SLACK_BROADCAST})`, 'gi');
const SLACK_WORDS = /(?<![\p{L}\p{N}_])@(?=(?:channel|here|everyone)(?![\p{L}\p{N}_]))/giu;
const DISCORD_WORDS = /(?<![\p{L}\p{N}_])@(?=(?:everyone|here)(?![\p{L}\p{N}_]))/giu;
const DISCORD_ROLE = /<@&(?=\d)/g;
/** Proper, non-empty prefixes of each word: what a piece may end with before the rest arrives. */
function partials(words: string[]): string {
  return words
    .flatMap((word) => Array.from({ length: word.length - 1 }, (_, i) => word.slice(0, i + 1).replace(/\^/g, '\\^')))
    .join('|');
}
/** The end of a piece that the next piece could turn into a Slack broadcast. */
const SLACK_PARTIAL_AT_END = new RegExp(
  [
    `(?:<|&lt;|&#0*60;|&#x0*3c;)(?:!(?:${partials(['channel', 'here', 'everyone', 'group', 'subteam^'])})?)?`,
    '&(?:l|lt|#0*|#0*6|#0*60|#x0*|#x0*3|#x0*3c)?',
    // Not after `<`: `<@` begins a user mention (`<@U123>`), which must stay whole.
    `(?<![\\p{L}\\p{N}_<])@(?:${partials(['channel', 'here', 'everyone'])})?`,
  ]
    .map((form) => `(?:${form})$`)
    .join('|'),
  'iu',
);
const DISCORD_PARTIAL_AT_END = new RegExp(`(?:<@&|(?<![\\p{L}\\p{N}_])@(?:${partials(['everyone', 'here'])})?)$`, 'iu');

/** A URL as chat clients auto-link it: scheme, a host, then anything up to a space or a bracket. */
const URL = /\b(?:https?|ftp):\/\/[\p{L}\p{N}.-]+(?::\d+)?(?:[/?#][^\s<>|]*)?/giu;

export interface NeutraliseOptions {
  /** More text will be appended to this in the same message (a stream piece): seal its end. */
  continued?: boolean;
}

/** `text` with every mass mention made inert for the given dialect; everything else unchanged. */
export function neutraliseBroadcasts(text: string, dialect: MentionDialect, options: NeutraliseOptions = {}): string {
  const inert = neutraliseWhole(text, dialect);
  if (!options.continued) return inert;
  return (dialect === 'discord' ? DISCORD_PARTIAL_AT_END : SLACK_PARTIAL_AT_END).test(inert)
    ? `${inert}${WORD_JOINER}`
    : inert;
}

function neutraliseWhole(text: string, dialect: MentionDialect): string {
  switch (dialect) {
    case 'slack-mrkdwn':
      return outsideUrls(
        text.replace(SLACK_TOKEN, (_m, inner: string, close: string) => `&lt;${inner}${close ? '&gt;' : ''}`),
        SLACK_WORDS,
      );
    case 'slack-markdown':
    case 'slack-plain':
      return outsideUrls(text.replace(SLACK_OPENER, `$1${WORD_JOINER}`), SLACK_WORDS);
    case 'discord':
      return outsideUrls(text.replace(DISCORD_ROLE, `<@&${WORD_JOINER}`), DISCORD_WORDS);
    default: {
      const never: never = dialect;
      throw new Error(`unknown mention dialect ${String(never)}`);
    }
  }
}

/**
 * True when the text holds nothing that `neutraliseBroadcasts` would change (for tests and asserts).
 * @internal
 */
export function isBroadcastFree(text: string, dialect: MentionDialect): boolean {
  return neutraliseBroadcasts(text, dialect) === text;
}

/** Put a word joiner after each `@` the pattern finds, except inside URLs. */
function outsideUrls(text: string, words: RegExp): string {
  if (!text.includes('@')) return text;
  let out = '';
  let offset = 0;
  for (const url of text.matchAll(URL)) {
    out += text.slice(offset, url.index).replace(words, `@${WORD_JOINER}`) + url[0];
    offset = url.index + url[0].length;
  }
  return out + text.slice(offset).replace(words, `@${WORD_JOINER}`);
}
