// What the Slack and Discord connectors share: the thread presenter and the surface it draws
// on, fence-safe splitting, markdown conversion, delta coalescing, tool-card state, the usage
// footer and the mass-mention rule. A re-export list and nothing else: each concept lives in
// the module named for it.
export { splitMarkdown, splitMarkdownPieces, withoutFenceRepair } from './chunk-markdown.js';
export { DeltaCoalescer } from './delta-coalescer.js';
export { escapeSlackText, toSlackMrkdwn } from './markdown-format.js';
export { scanFences } from './markdown-fences.js';
export { displayNote, formatDuration, phaseIcon, phaseLabel, restartNote, type ToolCardState } from './tool-card.js';
export { truncateForDisplay } from './truncate.js';
