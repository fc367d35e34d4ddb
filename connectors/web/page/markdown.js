// A small, escape-first markdown for the page: fenced code blocks, `inline code`, **bold**,
// and a backslash that makes the next mark literal. Everything is built as DOM nodes with
// text nodes for the text, never as HTML: what the model or a person wrote can only ever be
// text on the page, whatever it holds (`<script>`, `<img onerror>`, entities).
/* global document */

/**
 * The text as nodes: code blocks as <pre><code>, the rest as paragraphs of inline nodes.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const fence = /^```[^\n]*\n([\s\S]*?)(?:^```[ \t]*$|(?![\s\S]))/gm;
  let at = 0;
  for (let match = fence.exec(text); match; match = fence.exec(text)) {
    appendProse(fragment, text.slice(at, match.index));
    const pre = document.createElement('pre');
    const code = document.createElement('code');
    code.textContent = (match[1] ?? '').replace(/\n$/, '');
    pre.append(code);
    fragment.append(pre);
    at = fence.lastIndex;
    if (match[0] === '') fence.lastIndex++;
  }
  appendProse(fragment, text.slice(at));
  return fragment;
}

/**
 * Paragraphs split at blank lines; single newlines stay (the CSS keeps them).
 * @param {DocumentFragment} parent
 * @param {string} text
 */
function appendProse(parent, text) {
  for (const block of text.split(/\n{2,}/)) {
    const trimmed = block.replace(/^\n+|\n+$/g, '');
    if (!trimmed) continue;
    const paragraph = document.createElement('p');
    appendInline(paragraph, trimmed);
    parent.append(paragraph);
  }
}

/**
 * `code`, **bold**, and backslash escapes, read left to right.
 * @param {HTMLElement} parent
 * @param {string} text
 */
export function appendInline(parent, text) {
  let plain = '';
  const flush = () => {
    if (plain) parent.append(document.createTextNode(plain));
    plain = '';
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    if (char === '\\' && i + 1 < text.length && '\\`*_'.includes(text[i + 1] ?? '')) {
      plain += text[i + 1];
      i++;
      continue;
    }
    if (char === '`') {
      const end = text.indexOf('`', i + 1);
      if (end > i + 1) {
        flush();
        const code = document.createElement('code');
        code.textContent = text.slice(i + 1, end);
        parent.append(code);
        i = end;
        continue;
      }
    }
    if (char === '*' && text[i + 1] === '*') {
      const end = text.indexOf('**', i + 2);
      if (end > i + 2) {
        flush();
        const strong = document.createElement('strong');
        appendInline(strong, text.slice(i + 2, end));
        parent.append(strong);
        i = end + 1;
        continue;
      }
    }
    plain += char;
  }
  flush();
}
