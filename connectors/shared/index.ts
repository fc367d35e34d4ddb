// What the Slack and Discord connectors share: the thread presenter and the surface it draws
// on, fence-safe splitting, markdown conversion, delta coalescing, tool-card state, the usage
// footer and the mass-mention rule. A re-export list and nothing else: each concept lives in
// the module named for it.
export {
  approvalView,
  approvesInFullView,
  choiceRefusal,
  offeredChoices,
  type ApprovalView,
  type ChoicePlace,
  type ShownPart,
} from './approval-view.js';
export {
  MIN_SPLIT_LIMIT,
  splitMarkdown,
  splitMarkdownPieces,
  withoutFenceRepair,
  type MarkdownPiece,
} from './chunk-markdown.js';
export { DeltaCoalescer, type DeltaCoalescerOptions } from './delta-coalescer.js';
export { escapeSlackText, toSlackMrkdwn } from './markdown-format.js';
export { scanFences, type Fence, type FenceSpan } from './markdown-fences.js';
export { tablesToCodeBlocks } from './markdown-tables.js';
export {
  isBroadcastFree,
  neutraliseBroadcasts,
  WORD_JOINER,
  type MentionDialect,
  type NeutraliseOptions,
} from './mentions.js';
export {
  applyToolEvent,
  displayNote,
  formatDuration,
  isFinished,
  newToolCard,
  phaseIcon,
  phaseLabel,
  restartNote,
  recordDecision,
  summarizeArguments,
  type ToolCardState,
  type ToolPhase,
} from './tool-card.js';
export { ellipsize, truncateForDisplay } from './truncate.js';
export { estimateCostUsd, formatUsage, formatUsd } from './usage-footer.js';
export { storedCallText } from './stored-call-text.js';
export { ThreadPresenter, type ThreadPresenterDeps } from './thread-presenter.js';
export type {
  AnswerDraft,
  CardLocator,
  CardPrompt,
  CardView,
  InputMark,
  MessageId,
  NoteAction,
  ThreadNote,
  ThreadSurface,
  WorkStatus,
} from './thread-surface.js';
