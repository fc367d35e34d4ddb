// The one provider feed. Everything a provider receives passes through `buildOutbound`,
// in this order: the compaction view, then notices dropped and sidecars stripped, then
// PDFs and images adapted to the active model, then the per-call `<system-context>` block
// on the last user message. It never mutates the canonical history: downgrades are
// decided per call, so a model switch mid-session re-decides with the originals intact.
import { applyCompactionView, type CompactionState } from './compaction.js';
import { SIDECAR_KEYS, unresolvedAttachmentText, type ContentPart, type FilePart, type Message, type StoredFile, type ToolCall, type UserContent } from './messages.js';
import type { ModelCapabilities } from './provider.js';

export type OutboundMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: UserContent }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; [extra: `_${string}`]: unknown }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * Turns a shared file's reference into what the active model can take: an image or document
 * part read from the conversation's folder, extracted text, or a line saying where it is.
 * Synchronous and called once per message and model kind (the view is cached), so it may read
 * the file then (src/files/attachment-view.ts).
 */
export type AttachmentView = (file: StoredFile, capabilities: ModelCapabilities) => ContentPart[];

/** Turns a PDF part into something a model without native PDF support can read. */
export type PdfAdapter = (part: FilePart) => ContentPart[];

export const IMAGE_PLACEHOLDER = '[image attachment — not viewable by this model]';

export const placeholderPdfAdapter: PdfAdapter = (part) => [
  { type: 'text', text: `[PDF attachment${part.file.filename ? ` "${part.file.filename}"` : ''} — not readable by this model]` },
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
}
const viewCache = new WeakMap<readonly Message[], ViewCache>();

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
    };
    extendView(cache, applyCompactionView(messages, options.compactionState), options);
    viewCache.set(messages, cache);
  } else if (cache.covered < messages.length) {
    extendView(cache, messages.slice(cache.covered), options);
  }
  cache.covered = messages.length;
  cache.lastCovered = messages.at(-1);

  const out = cache.view.slice();
  const context = options.systemContext?.trim();
  const lastUser = out[cache.lastUserIndex];
  if (context && lastUser?.role === 'user') {
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

function extendView(cache: ViewCache, messages: readonly Message[], options: OutboundOptions): void {
  for (const message of messages) {
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
    if (stripped.role === 'assistant') cache.callOrder = new Map((stripped.tool_calls ?? []).map((call, index) => [call.id, index]));
    if (stripped.role === 'tool') insertInCallOrder(cache, stripped);
    else cache.view.push(stripped);
  }
}

/**
 * Results are appended as calls finish (a concurrent batch in any order, a refused call
 * before an approved one that ran), but the model reads them in the order of its calls.
 * A result moves back only past other results of the same round.
 */
function insertInCallOrder(cache: ViewCache, result: Extract<OutboundMessage, { role: 'tool' }>): void {
  const order = (message: OutboundMessage | undefined) =>
    message?.role === 'tool' ? (cache.callOrder.get(message.tool_call_id) ?? -1) : Number.NEGATIVE_INFINITY;
  const rank = cache.callOrder.get(result.tool_call_id) ?? Number.POSITIVE_INFINITY;
  let at = cache.view.length;
  while (at > 0 && order(cache.view[at - 1]) > rank) at--;
  cache.view.splice(at, 0, result);
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
  const needsWork = content.some((p) => (p.type === 'image_url' && !vision) || (p.type === 'file' && !pdf) || p.type === 'attachment');
  if (!needsWork) return content;
  const pdfAdapter = options.pdfAdapter ?? placeholderPdfAdapter;
  return content.flatMap((part): ContentPart[] => {
    if (part.type === 'image_url' && !vision) return [{ type: 'text', text: IMAGE_PLACEHOLDER }];
    if (part.type === 'file' && !pdf) return pdfAdapter(part);
    // A shared file's reference becomes bytes (or text) only here, per call: never in the transcript.
    if (part.type === 'attachment') return options.attachmentView?.(part.attachment, options.capabilities) ?? [{ type: 'text', text: unresolvedAttachmentText(part) }];
    return [part];
  });
}

function withSystemContext(content: UserContent, context: string): UserContent {
  const block = `<system-context>\n${context}\n</system-context>`;
  if (typeof content === 'string') return `${content}\n\n${block}`;
  return [...content, { type: 'text', text: block }];
}
