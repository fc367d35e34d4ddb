// The one provider feed. Everything a provider receives passes through `buildOutbound`,
// in this order: the compaction view, then notices dropped and sidecars stripped, then
// PDFs and images adapted to the active model, then the per-call `<system-context>` block
// on the last user message. It never mutates the canonical history: downgrades are
// decided per call, so a model switch mid-session re-decides with the originals intact.
import { applyCompactionView, type CompactionState } from './compaction.js';
import {
  SIDECAR_KEYS,
  unresolvedAttachmentText,
  type ContentPart,
  type FilePart,
  type Message,
  type OutboundMessage,
  type StoredFile,
  type ToolCall,
  type UserContent,
} from './messages.js';
import type { ModelCapabilities } from './provider.js';

/**
 * Turns a shared file's reference into what the active model can take: an image or document
 * part read from the conversation's folder, extracted text, or a line saying where it is.
 * Synchronous and called once per message and model kind (the view is cached), so it may read
 * the file then (src/files/attachment-view.ts).
 */
export type AttachmentView = (file: StoredFile, capabilities: ModelCapabilities) => ContentPart[];

/** Turns a PDF part into something a model without native PDF support can read. */
export type PdfAdapter = (part: FilePart) => ContentPart[];

/** @internal */
export const IMAGE_PLACEHOLDER = '[image attachment — not viewable by this model]';

const placeholderPdfAdapter: PdfAdapter = (part) => [
  {
    type: 'text',
    text: `[PDF attachment${part.file.filename ? ` "${part.file.filename}"` : ''} — not readable by this model]`,
  },
];

export interface OutboundOptions {
  compactionState: CompactionState | null;
  capabilities: ModelCapabilities;
  /** Dynamic per-call context (mode reminders, live lists). Empty: nothing is added. */
  systemContext?: string;
  pdfAdapter?: PdfAdapter;
  attachmentView?: AttachmentView;
}

// Canonical messages are never edited once appended, so the stripped copy of each one can
// be made once and reused on every later call: without this, every model call would copy
// the whole (growing) history, since every message carries at least a `ts` sidecar.
const strippedCache = new WeakMap<Message, OutboundMessage>();

// The history is append-only too, so the view built for the last call is extended with
// what was appended since, instead of walking the whole history again on every model
// call. Rebuilt whenever anything the view depends on changed, or the history did not
// simply grow.
interface ViewCache {
  compactionState: CompactionState | null;
  vision: boolean;
  pdf: boolean;
  pdfAdapter: PdfAdapter | undefined;
  attachmentView: AttachmentView | undefined;
  /** How many canonical messages the view covers, and the last of them. */
  covered: number;
  lastCovered: Message | undefined;
  view: OutboundMessage[];
  lastUserIndex: number;
  /** Where each call of the latest assistant message stands among its calls. */
  callOrder: Map<string, number>;
  /** The user message the last call's `<system-context>` block was added to, put back before the view changes. */
  withContext: { index: number; original: OutboundMessage } | undefined;
}
const viewCache = new WeakMap<readonly Message[], ViewCache>();

/**
 * The messages a model call sends. The array is the cache's own view, not a copy (a copy per
 * call was most of what a call allocated in a long turn): it holds until the next build for
 * the same history, so a provider converts it during its call, and anything that keeps it
 * longer (the traces' content capture) copies it.
 */
export function buildOutbound(messages: readonly Message[], options: OutboundOptions): OutboundMessage[] {
  let cache = viewCache.get(messages);
  if (!cache || !stillValid(cache, messages, options)) {
    cache = {
      compactionState: options.compactionState,
      vision: options.capabilities.vision,
      pdf: options.capabilities.pdf,
      pdfAdapter: options.pdfAdapter,
      attachmentView: options.attachmentView,
      covered: 0,
      lastCovered: undefined,
      view: [],
      lastUserIndex: -1,
      callOrder: new Map(),
      withContext: undefined,
    };
    const view = applyCompactionView(messages, options.compactionState);
    extendView(cache, view, 0, options);
    viewCache.set(messages, cache);
  } else {
    if (cache.withContext) {
      cache.view[cache.withContext.index] = cache.withContext.original;
      cache.withContext = undefined;
    }
    if (cache.covered < messages.length) extendView(cache, messages, cache.covered, options);
  }
  cache.covered = messages.length;
  cache.lastCovered = messages.at(-1);

  const out = cache.view;
  const context = options.systemContext?.trim();
  const lastUser = out[cache.lastUserIndex];
  if (context && lastUser?.role === 'user') {
    cache.withContext = { index: cache.lastUserIndex, original: lastUser };
    out[cache.lastUserIndex] = { role: 'user', content: withSystemContext(lastUser.content, context) };
  }
  return out;
}

function stillValid(cache: ViewCache, messages: readonly Message[], options: OutboundOptions): boolean {
  return (
    cache.compactionState === options.compactionState &&
    cache.vision === options.capabilities.vision &&
    cache.pdf === options.capabilities.pdf &&
    cache.pdfAdapter === options.pdfAdapter &&
    cache.attachmentView === options.attachmentView &&
    messages.length >= cache.covered &&
    messages[cache.covered - 1] === cache.lastCovered
  );
}

/** Add `messages` from index `from` on to the view. */
function extendView(cache: ViewCache, messages: readonly Message[], from: number, options: OutboundOptions): void {
  for (let i = from; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'notice') continue;
    let stripped = strippedCache.get(message);
    if (!stripped) {
      stripped = stripSidecars(message);
      strippedCache.set(message, stripped);
    }
    if (stripped.role === 'user') {
      const adapted = adaptContent(stripped.content, options);
      if (adapted !== stripped.content) stripped = { role: 'user', content: adapted };
      cache.lastUserIndex = cache.view.length;
    }
    if (stripped.role === 'assistant') cache.callOrder = callOrderOf(stripped.tool_calls);
    if (stripped.role === 'tool') insertInCallOrder(cache, stripped);
    else cache.view.push(stripped);
  }
}

const NO_CALLS = new Map<string, number>();

function callOrderOf(calls: readonly ToolCall[] | undefined): Map<string, number> {
  if (!calls || calls.length === 0) return NO_CALLS;
  const order = new Map<string, number>();
  for (let i = 0; i < calls.length; i++) order.set(calls[i]!.id, i);
  return order;
}

/**
 * Results are appended as calls finish (a concurrent batch in any order, a refused call
 * before an approved one that ran), but the model reads them in the order of its calls.
 * A result moves back only past other results of the same round.
 */
function insertInCallOrder(cache: ViewCache, result: Extract<OutboundMessage, { role: 'tool' }>): void {
  const rank = cache.callOrder.get(result.tool_call_id) ?? Number.POSITIVE_INFINITY;
  let at = cache.view.length;
  while (at > 0 && rankIn(cache, cache.view[at - 1]) > rank) at--;
  if (at === cache.view.length) cache.view.push(result);
  else cache.view.splice(at, 0, result);
}

function rankIn(cache: ViewCache, message: OutboundMessage | undefined): number {
  return message?.role === 'tool' ? (cache.callOrder.get(message.tool_call_id) ?? -1) : Number.NEGATIVE_INFINITY;
}

function stripSidecars(message: Exclude<Message, { role: 'notice' }>): OutboundMessage {
  if (!SIDECAR_KEYS.some((key) => key in message)) return message;
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
    case 'assistant': {
      // Keep the provider-private `_extras`: the owning provider replays them and every
      // other provider strips them. `_display` is a sidecar, not an extra.
      const { ts: _ts, reasoning: _r, usage: _u, _display: _d, role: _role, content, tool_calls, ...extras } = message;
      const out: OutboundMessage = { role: 'assistant', content };
      if (tool_calls && tool_calls.length > 0) out.tool_calls = tool_calls;
      for (const [key, value] of Object.entries(extras)) {
        if (key.startsWith('_')) out[key as `_${string}`] = value;
      }
      return out;
    }
  }
}

function adaptContent(content: UserContent, options: OutboundOptions): UserContent {
  if (typeof content === 'string') return content;
  const { vision, pdf } = options.capabilities;
  const needsWork = content.some(
    (p) => (p.type === 'image_url' && !vision) || (p.type === 'file' && !pdf) || p.type === 'attachment',
  );
  if (!needsWork) return content;
  const pdfAdapter = options.pdfAdapter ?? placeholderPdfAdapter;
  return content.flatMap((part): ContentPart[] => {
    if (part.type === 'image_url' && !vision) return [{ type: 'text', text: IMAGE_PLACEHOLDER }];
    if (part.type === 'file' && !pdf) return pdfAdapter(part);
    // A shared file's reference becomes bytes (or text) only here, per call: never in the transcript.
    if (part.type === 'attachment')
      return (
        options.attachmentView?.(part.attachment, options.capabilities) ?? [
          { type: 'text', text: unresolvedAttachmentText(part) },
        ]
      );
    return [part];
  });
}

function withSystemContext(content: UserContent, context: string): UserContent {
  const block = `<system-context>\n${context}\n</system-context>`;
  if (typeof content === 'string') return `${content}\n\n${block}`;
  return [...content, { type: 'text', text: block }];
}
