// Markdown as models write it → Slack mrkdwn, for the places that only take mrkdwn (`section`
// and `context` text, `chat.update` text, notification fallbacks). Streamed answers go to
// `chat.appendStream` / the `markdown` block as standard markdown and need none of this.
//
// The idea to hold: the library (slackify-markdown) converts prose; code never goes through
// it. Fenced blocks, inline code and Slack's own mention tokens are set aside before the
// conversion and put back after, escaped the way Slack wants. Then no `<` survives that does not
// start a link the converter made or a user/channel mention: `<!here>` or `<!channel>` in a
// model's answer (prompt injection, or a quoted message) would otherwise ping everyone.
//
// Library choice: slackify-markdown 4.5.0. Its 5.x line declares Node >= 22 and this project
// supports Node 20; 4.5.0 is CommonJS with its own types, imports cleanly from ESM on Node 20,
// and is the same converter (unified/remark 9 rather than 11). What it gets wrong for chat is
// handled here: raw HTML (and so `<!here>`) passes through untouched, code is not escaped,
// `<#C…|name>` loses its closing bracket, task-list boxes are dropped, and tables, rules and
// hard line breaks come out as raw markdown.
import slackify from 'slackify-markdown';
import { scanFences } from './markdown-fences.js';
import { tablesToCodeBlocks } from './markdown-tables.js';

// Part of the formatting toolkit, but it lives in truncate.ts: the tool card uses it too and
// should not load the Slack converter to get it.
/** Plain text for mrkdwn: Slack reads `&`, `<` and `>` as control characters, everything else literally. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Convert a model's markdown to Slack mrkdwn, keeping code exactly as written. */
export function toSlackMrkdwn(markdown: string): string {
  if (markdown.trim() === '') return '';
  // Tables first: they become code blocks, which the next step then protects like any other.
  const source = tablesToCodeBlocks(markdown.replace(/\r\n/g, '\n'));
  const vault = new Vault(source);
  const converted = slackify(setAside(source, vault));
  return vault.restore(neutralise(converted)).replace(/\s+$/, '');
}

/**
 * Slack user and channel mentions the model may write on purpose. Broadcasts (`<!here>`,
 * `<!channel>`, `<!everyone>`, `<!subteam^…>`) are deliberately not here: they get escaped.
 */
const MENTION = /^<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+)(?:\|[^<>\n]*)?>/;

/** A link as slackify writes it: `<https://…|text>` or `<https://…>`. */
const CONVERTER_LINK = /<(?!(?:https?|mailto):[^\s<>|]+(?:\|[^<>\n]*)?>)/gi;

/** Replace code and mentions with opaque tokens the converter leaves alone. */
function setAside(markdown: string, vault: Vault): string {
  let out = '';
  let offset = 0;
  for (const span of scanFences(markdown)) {
    out += setAsideInline(markdown.slice(offset, span.start), vault);
    const indent = span.fence.indent.replace(/\t/g, '    ');
    const body = dedent(markdown.slice(span.bodyStart, span.bodyEnd).replace(/\n$/, ''), indent.length);
    // The info string is dropped: Slack has no highlighting and shows it as a line of code.
    // At most 3 spaces of indent: 4 would make the token line an indented code block of its own.
    out += `${indent.slice(0, 3)}${vault.block(`\`\`\`\n${escapeSlackText(body)}\n\`\`\``)}`;
    offset = span.end;
  }
  return out + setAsideInline(markdown.slice(offset), vault);
}

/** Inline code spans (CommonMark 6.1: a run of n backticks closes at the next run of exactly n) and mentions. */
function setAsideInline(prose: string, vault: Vault): string {
  // Task-list boxes: the converter drops them, and "done" vs "to do" is the point of the list.
  const text = prose.replace(
    /^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)\[([ xX])\](?=[ \t])/gm,
    (_m, lead: string, mark: string) => `${lead}${mark === ' ' ? '☐' : '☑'}`,
  );
  let out = '';
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      out += text.slice(i, i + 2);
      i += 2;
    } else if (char === '`') {
      const run = runLength(text, i);
      const close = closingRun(text, i + run, run);
      if (close === -1) {
        out += text.slice(i, i + run);
        i += run;
        continue;
      }
      out += vault.inline(`\`${escapeSlackText(codeSpanContent(text.slice(i + run, close)))}\``);
      i = close + run;
    } else if (char === '<' && MENTION.test(text.slice(i, i + 120))) {
      const mention = MENTION.exec(text.slice(i, i + 120))![0];
      out += vault.inline(mention);
      i += mention.length;
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

/** Converter output made safe: stray `<` escaped, hard-break backslashes and `***` rules turned into what Slack shows. */
function neutralise(converted: string): string {
  return converted
    .replace(CONVERTER_LINK, '&lt;')
    .replace(/\\\n/g, '\n')
    .replace(/^\*\*\*$/gm, '──────────');
}

function runLength(text: string, at: number): number {
  let end = at;
  while (text[end] === '`') end++;
  return end - at;
}

function closingRun(text: string, from: number, length: number): number {
  let at = text.indexOf('`', from);
  while (at !== -1) {
    const run = runLength(text, at);
    if (run === length) return at;
    at = text.indexOf('`', at + run);
  }
  return -1;
}

/** CommonMark: line endings become spaces; one space is stripped from each side when both have one. */
function codeSpanContent(raw: string): string {
  const flat = raw.replace(/\n/g, ' ');
  return flat.length > 2 && flat.startsWith(' ') && flat.endsWith(' ') && flat.trim() !== '' ? flat.slice(1, -1) : flat;
}

/** Remove up to `width` leading spaces from each line, as CommonMark does for an indented fence's body. */
function dedent(body: string, width: number): string {
  if (width === 0) return body;
  const pattern = new RegExp(`^ {0,${width}}`, 'gm');
  return body.replace(pattern, '');
}

/**
 * Holds what was set aside. A token is a private-use character (one the text does not contain),
 * a number and the same character again: nothing in the converter touches it.
 */
class Vault {
  private readonly entries: { text: string; block: boolean }[] = [];
  private readonly sentinel: string;

  constructor(source: string) {
    let code = 0xe000;
    while (source.includes(String.fromCharCode(code))) code++;
    this.sentinel = String.fromCharCode(code);
  }

  inline(text: string): string {
    return this.add(text, false);
  }

  block(text: string): string {
    return this.add(text, true);
  }

  restore(converted: string): string {
    const token = new RegExp(`([ \\t]*)${this.sentinel}(\\d+)${this.sentinel}`, 'g');
    return converted.replace(token, (_match, space: string, index: string, offset: number) => {
      const entry = this.entries[Number(index)]!;
      if (!entry.block) return space + entry.text;
      // A code block starts at the beginning of a line: Slack only fences there.
      return offset === 0 || converted[offset - 1] === '\n' ? entry.text : `\n${entry.text}`;
    });
  }

  private add(text: string, block: boolean): string {
    this.entries.push({ text, block });
    return `${this.sentinel}${this.entries.length - 1}${this.sentinel}`;
  }
}
