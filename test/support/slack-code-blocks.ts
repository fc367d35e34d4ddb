// Reading our mrkdwn code blocks back as a person sees them in Slack: the body between the
// fences, with `&`, `<`, `>` unescaped and without the zero-width spaces that keep backticks
// apart (connectors/slack/block-kit.ts). Tests use it to check that every character of a text
// reached the screen, in order.

/** What Slack shows for one code block (`block` is exactly one, fences included). */
export function shownInCodeBlock(block: string): string {
  if (!block.startsWith('```\n') || !block.endsWith('\n```'))
    throw new Error(`not one of our code blocks: ${block.slice(0, 80)}`);
  return unescapeCode(block.slice(4, -4));
}

/** Every code block in a mrkdwn text, as shown, in order. */
export function codeBlocksIn(mrkdwn: string): string[] {
  return [...mrkdwn.matchAll(/```\n([\s\S]*?)\n```/g)].map((match) => unescapeCode(match[1]!));
}

/** The mrkdwn texts of the section blocks of a message or a view, in order. */
export function sectionTexts(blocks: readonly unknown[]): string[] {
  return blocks
    .filter(
      (block): block is { type: string; text: { text: string } } => (block as { type?: string }).type === 'section',
    )
    .map((block) => block.text.text);
}

function unescapeCode(body: string): string {
  return body
    .replace(/\u200B/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
