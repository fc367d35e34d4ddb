// The text pieces the Slack and Discord connectors share: fence-safe splitting, markdown
// conversion, delta coalescing, tool-card words and display truncation. A re-export list and
// nothing else: each concept lives in the module named for it, and the larger shared parts
// (the thread presenter, the command runner) are imported from their own modules.
export { splitMarkdown, splitMarkdownPieces, withoutFenceRepair } from './chunk-markdown.js';
export { DeltaCoalescer } from './delta-coalescer.js';
export { escapeSlackText, toSlackMrkdwn } from './markdown-format.js';
export { scanFences } from './markdown-fences.js';
export { displayNote, formatDuration, phaseIcon, phaseLabel, restartNote, type ToolCardState } from './tool-card.js';
export { truncateForDisplay } from './truncate.js';
