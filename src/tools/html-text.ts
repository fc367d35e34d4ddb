// HTML reduced to readable text, roughly: what a person would read on the page, without
// markup, scripts or styles. A regex pass, not a parser, on purpose: the result feeds a
// model, which copes with the odd stray fragment, and the tool stays dependency-free.
//
// One idea: remove what is never read (scripts, styles, comments, head) before anything
// else, then turn block boundaries into line breaks, so the text keeps its paragraphs.

/** Elements whose content is never part of the readable page. */
const INVISIBLE = ['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object'];

const BLOCK = /<\/?(?:p|div|section|article|main|header|footer|nav|aside|h[1-6]|ul|ol|table|thead|tbody|pre|blockquote|figure|figcaption|form|fieldset|dl|dt|dd|details|summary|address)\b[^>]*>/gi;

const ENTITIES = new Map<string, string>(Object.entries({
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '–', mdash: '—', hellip: '…',
  lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', bull: '•', middot: '·',
  copy: '©', reg: '®', trade: '™', euro: '€', pound: '£', times: '×', deg: '°',
}));

export interface PageText {
  title?: string;
  text: string;
}

export function htmlToText(html: string): PageText {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? collapseSpaces(decodeEntities(stripTags(titleMatch[1]!))).trim() : undefined;

  let text = html.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  for (const element of INVISIBLE) {
    // An unclosed element runs to the end of the document, as a browser would treat it.
    text = text.replace(new RegExp(`<${element}\\b[^>]*>[\\s\\S]*?(?:</${element}\\s*>|$)`, 'gi'), ' ');
  }
  text = text
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<hr\b[^>]*>/gi, '\n---\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<\/(?:td|th)\s*>/gi, ' \t')
    // One line per table row: only the row's end breaks the line.
    .replace(/<\/tr\s*>/gi, '\n')
    .replace(BLOCK, '\n');
  text = decodeEntities(stripTags(text));
  const lines = text.split('\n').map((line) => collapseSpaces(line).trim());
  const body = lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
  return title ? { title, text: body } : { text: body };
}

function stripTags(html: string): string {
  return html.replace(/<\/?[a-zA-Z][^>]*>/g, '').replace(/<![^>]*>/g, '');
}

function collapseSpaces(text: string): string {
  return text.replace(/[ \t\f\v\u00a0]+/g, ' ');
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z][a-z0-9]*);/gi, (entity, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return ENTITIES.get(body.toLowerCase()) ?? entity;
  });
}
