// Compact mode's progress message (TOOL_DISPLAY=compact): a reply's tool calls as a checklist,
// one line per call (its status mark, title, details, and a short output once it ended), drawn
// again whole each time the bot updates the message in place. Every string goes in as text.
/* global document */

/**
 * @typedef {{ id: string, title: string, status: 'pending' | 'in_progress' | 'complete' | 'error', details?: string, output?: string }} ProgressStep
 */

const MARKS = /** @type {Record<ProgressStep['status'], string>} */ ({
  pending: '○',
  in_progress: '◐',
  complete: '✓',
  error: '✗',
});
const WORDS = /** @type {Record<ProgressStep['status'], string>} */ ({
  pending: 'Waiting',
  in_progress: 'Running',
  complete: 'Done',
  error: 'Failed or stopped',
});

/**
 * @param {string} tag
 * @param {string} className
 * @param {string} [text]
 * @returns {HTMLElement}
 */
function node(tag, className, text) {
  const made = document.createElement(tag);
  made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

/**
 * The checklist of one reply's steps.
 * @param {ProgressStep[]} steps
 * @returns {HTMLElement}
 */
export function progressElement(steps) {
  const list = node('ol', 'steps');
  list.setAttribute('aria-label', 'Progress');
  for (const step of steps) {
    const item = node('li', 'step');
    item.dataset.step = step.id;
    item.dataset.status = step.status;
    const mark = node('span', 'step-mark', MARKS[step.status] ?? '?');
    mark.title = WORDS[step.status] ?? step.status;
    mark.setAttribute('aria-label', mark.title);
    const line = node('div', 'step-line');
    line.append(node('strong', 'step-title', step.title));
    if (step.details) line.append(node('code', 'step-details', step.details));
    item.append(mark, line);
    if (step.output) item.append(node('pre', 'step-output', step.output));
    list.append(item);
  }
  return list;
}
