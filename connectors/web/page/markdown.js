// Markdown as the page shows it: the blocks (markdown-blocks.js) and the marks inside them
// (markdown-inline.js) built as DOM nodes, every piece of text a text node. Nothing is ever
// parsed as HTML: what the model or a person wrote can only be text on the page, whatever it
// holds (`<script>`, `<img onerror>`, entities). A link is made only to an absolute http(s)
// address (safeHref), opens in a new tab, and takes nothing from this page with it
// (rel="noopener noreferrer").
/* global document */
import { parseBlocks } from './markdown-blocks.js';
import { parseInline, safeHref } from './markdown-inline.js';

/** @typedef {import('./markdown-blocks.js').Block} Block */
/** @typedef {import('./markdown-inline.js').Inline} Inline */

/**
 * The text as nodes: headings, paragraphs, lists, quotes, tables, code blocks.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  appendBlocks(fragment, parseBlocks(text));
  return fragment;
}

/**
 * A line's marks only (`code`, **bold**, links…), for a note or a status.
 * @param {HTMLElement} parent
 * @param {string} text
 */
export function appendInline(parent, text) {
  appendNodes(parent, parseInline(text));
}

/**
 * @param {Node} parent
 * @param {Block[]} blocks
 */
function appendBlocks(parent, blocks) {
  for (const block of blocks) parent.appendChild(blockNode(block));
}

/**
 * @param {Block} block
 * @returns {Node}
 */
function blockNode(block) {
  switch (block.type) {
    case 'paragraph':
      return withInline(document.createElement('p'), block.text);
    case 'heading': {
      // An answer's headings sit under the message's own header: h3 to h6, never the page's h1 / h2.
      const heading = document.createElement(`h${Math.min(6, block.level + 2)}`);
      heading.className = `md-h${block.level}`;
      return withInline(heading, block.text);
    }
    case 'code': {
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      code.textContent = block.text;
      if (block.lang) pre.dataset.lang = block.lang;
      pre.append(code);
      return pre;
    }
    case 'rule':
      return document.createElement('hr');
    case 'quote': {
      const quote = document.createElement('blockquote');
      appendBlocks(quote, block.blocks);
      return quote;
    }
    case 'list': {
      const list = document.createElement(block.ordered ? 'ol' : 'ul');
      if (block.ordered && block.start !== 1) list.setAttribute('start', String(block.start));
      for (const item of block.items) {
        const li = document.createElement('li');
        // A tight item of one paragraph is its text, without a paragraph's margins.
        const only = item.length === 1 ? item[0] : undefined;
        if (only?.type === 'paragraph') appendInline(li, only.text);
        else appendBlocks(li, item);
        list.append(li);
      }
      return list;
    }
    case 'table':
      return tableNode(block);
  }
}

/**
 * A table in a box that scrolls sideways when it is wider than the message.
 * @param {Extract<Block, { type: 'table' }>} block
 * @returns {HTMLElement}
 */
function tableNode(block) {
  const box = document.createElement('div');
  box.className = 'table-box';
  const table = document.createElement('table');
  const head = document.createElement('thead');
  head.append(rowNode('th', block.header, block.align));
  table.append(head);
  if (block.rows.length > 0) {
    const body = document.createElement('tbody');
    for (const row of block.rows) body.append(rowNode('td', row, block.align));
    table.append(body);
  }
  box.append(table);
  return box;
}

/**
 * @param {'th' | 'td'} tag
 * @param {string[]} cells
 * @param {import('./markdown-blocks.js').Align[]} align
 */
function rowNode(tag, cells, align) {
  const row = document.createElement('tr');
  cells.forEach((text, index) => {
    const cell = document.createElement(tag);
    const side = align[index];
    if (side) cell.style.textAlign = side;
    row.append(withInline(cell, text));
  });
  return row;
}

/**
 * @template {HTMLElement} T
 * @param {T} element
 * @param {string} text
 * @returns {T}
 */
function withInline(element, text) {
  appendNodes(element, parseInline(text));
  return element;
}

/**
 * @param {Node} parent
 * @param {Inline[]} nodes
 */
function appendNodes(parent, nodes) {
  for (const node of nodes) {
    switch (node.type) {
      case 'text':
        parent.appendChild(document.createTextNode(node.text));
        break;
      case 'code': {
        const code = document.createElement('code');
        code.textContent = node.text;
        parent.appendChild(code);
        break;
      }
      case 'strong':
      case 'em':
      case 'del': {
        const mark = document.createElement(node.type);
        appendNodes(mark, node.children);
        parent.appendChild(mark);
        break;
      }
      case 'link': {
        // markdown-inline.js made only safe addresses into links; checked again where the link is made.
        const href = safeHref(node.href);
        if (!href) {
          appendNodes(parent, node.children);
          break;
        }
        const link = document.createElement('a');
        link.href = href;
        link.title = href;
        link.target = '_blank';
        link.rel = 'noopener noreferrer nofollow';
        appendNodes(link, node.children);
        parent.appendChild(link);
        break;
      }
    }
  }
}
