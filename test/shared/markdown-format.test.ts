import { describe, expect, it } from 'vitest';
import { escapeSlackText, toSlackMrkdwn } from '../../connectors/shared/markdown-format.js';

describe('toSlackMrkdwn', () => {
  it("turns a model's everyday markdown into mrkdwn: bold, italics, strike, headings, links, bullets", () => {
    const slack = toSlackMrkdwn(
      '## Result\n\n**Tests pass** and *lint* is ~~red~~ green. See [the run](https://ci.example.com/runs/7?tab=log&x=1).\n\n- one\n- two',
    );
    expect(slack).toContain('*Result*');
    expect(slack).toMatch(/\*Tests pass\*/);
    expect(slack).toMatch(/_lint_/);
    expect(slack).toMatch(/~red~/);
    expect(slack).toContain('<https://ci.example.com/runs/7?tab=log&x=1|the run>');
    expect(slack).toMatch(/^•\s+one$/m);
    expect(slack).not.toContain('**');
  });

  it('keeps a code block exactly as written: no formatting inside, only Slack’s three characters escaped', () => {
    const code = 'if (a < b && c > d) {\n  return "**not bold** _nor italic_ [no](link)";\n}';
    const slack = toSlackMrkdwn(`Fix:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`);
    expect(slack).toContain(`\`\`\`\n${escapeSlackText(code)}\n\`\`\``);
    // Slack decodes the entities, so the reader sees the original code.
    expect(decodeSlackEntities(slack)).toContain(code);
  });

  it('keeps inline code literal too', () => {
    const slack = toSlackMrkdwn('Run `npm test -- --grep "a|b" && echo <ok>` then `**x**`.');
    expect(slack).toContain('`npm test -- --grep "a|b" &amp;&amp; echo &lt;ok&gt;`');
    expect(slack).toContain('`**x**`');
  });

  it('keeps a code block inside a list item, and closes one the model left open', () => {
    const listed = toSlackMrkdwn('1. Install:\n\n   ```sh\n   npm install <pkg>\n   ```\n2. Run it.');
    expect(listed).toContain('```\nnpm install &lt;pkg&gt;\n```');
    expect(listed).toMatch(/2\.\s+Run it\./);

    const unclosed = toSlackMrkdwn('Script:\n```python\nprint("x < y")');
    expect(unclosed.endsWith('```\nprint("x &lt; y")\n```')).toBe(true);
  });

  it('a model writing <!here> or <!channel> pings nobody, while a user mention still works', () => {
    const slack = toSlackMrkdwn(
      'Hey <!here> and <!channel>, <!subteam^S123>: ask <@U012AB3CD> in <#C0123456|general>.',
    );
    expect(slack).not.toMatch(/<!/);
    expect(slack).toContain('&lt;!here>');
    expect(slack).toContain('<@U012AB3CD>');
    expect(slack).toContain('<#C0123456|general>');
  });

  it('raw HTML shows as text instead of becoming a broken Slack link', () => {
    const slack = toSlackMrkdwn('Use <details><summary>more</summary>x</details> or <br> here.');
    expect(slack).not.toMatch(/<(?![@#]|https?:|mailto:)/);
    expect(decodeSlackEntities(slack)).toContain('<br>');
  });

  it('escapes &, < and > in prose', () => {
    expect(toSlackMrkdwn('AT&T says 3 < 4')).toBe('AT&amp;T says 3 &lt; 4');
  });

  it('shows a table as aligned columns in a code block instead of raw pipes', () => {
    const slack = toSlackMrkdwn('| Tool | Runs |\n|:--|--:|\n| read_file | 3 |\n| shell | 12 |');
    expect(slack).toBe('```\nTool      | Runs\n----------+-----\nread_file |    3\nshell     |   12\n```');
  });

  it('keeps the state of a task list', () => {
    const slack = toSlackMrkdwn('- [ ] write tests\n- [x] write code');
    expect(slack).toMatch(/☐ write tests/);
    expect(slack).toMatch(/☑ write code/);
  });

  it('turns a horizontal rule and a hard line break into what Slack can show', () => {
    const slack = toSlackMrkdwn('above\n\n---\n\nfirst\\\nsecond');
    expect(slack).toContain('──────────');
    expect(slack).toContain('first\nsecond');
  });

  it('gives nothing for nothing', () => {
    expect(toSlackMrkdwn('')).toBe('');
    expect(toSlackMrkdwn('  \n ')).toBe('');
  });
});

describe('escapeSlackText', () => {
  it('escapes exactly the three control characters, ampersand first', () => {
    expect(escapeSlackText('a & b < c > d &amp;')).toBe('a &amp; b &lt; c &gt; d &amp;amp;');
    expect(escapeSlackText('*bold* _x_ `y`')).toBe('*bold* _x_ `y`');
  });
});

function decodeSlackEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
