// The one gate every byte the bot sends to Slack passes: a `fetch` that makes mass mentions
// inert (`<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>`, `@here`…; the text rule is
// `shared/mentions.ts`) in the request body before it leaves. Nothing that posts has to
// remember it, and a new code path cannot forget it.
//
// Why `fetch` and not the WebClient: Bolt 5 builds its WebClients itself and takes no client
// from us. `app.client` is one; the `client` handed to listeners (and so `say()` and
// `sayStream()`) is another, from a per-team pool Bolt fills after `authorize`; function
// tokens get a fresh one per event. What they all share is `clientOptions`, copied into each,
// and `clientOptions.fetch` is what `@slack/web-api` 8 sends every call through
// (`WebClient.makeRequest`, after `apiCall` serialised the arguments). Bolt's `respond()`
// (response_url posts) uses that same `clientOptions.fetch` (App.js: `this.fetchFn`), and
// the Socket Mode receiver gets the same options. So one option covers every method (chat.*,
// the *Stream trio, views.*, assistant.threads.*, files.*), every client and respond().
//
// Bodies arrive serialised: form-encoded for Web API calls (non-scalar arguments as JSON
// strings), multipart when a file is uploaded (file bytes are never touched), JSON for
// respond(). Each field gets the dialect Slack reads it in: `text` is mrkdwn, `markdown_text`
// is markdown, a text object says its own `type`, attachments are mrkdwn; anything else is
// treated as plain text, whose rule (a word joiner) is inert in every dialect. Identifiers and
// round-tripped data (button `value`, `action_id`, `block_id`, `private_metadata`, message
// `metadata`, URLs) are never rewritten, so clicks, card lookups and links keep working. A
// rich-text `broadcast` or `usergroup` element becomes plain text. chat.startStream and
// chat.appendStream pieces are sealed at their end (a word joiner after a half-written
// `<!cha`), since Slack joins them and a broadcast could be split across two calls.
//
// Limits: a neutralised text grows (a joiner is one character, `&lt;…&gt;` six more), so a
// field filled to Slack's cap by a text full of broadcasts can go over it (and that call
// fails); answer-stream.ts keeps 1,000 characters of room under markdown_text's 12,000. A WebClient made by
// hand (`new WebClient`) bypasses Bolt's options: give it `fetch: guardedFetch()`.
import type { FetchFunction } from '@slack/web-api';
import { neutraliseBroadcasts, WORD_JOINER, type MentionDialect } from '../shared/mentions.js';

/** `inner` (default: the global fetch, looked up per call) with every request body made broadcast-free. */
export function guardedFetch(inner?: FetchFunction): FetchFunction {
  return (url, init) => {
    const send: FetchFunction = inner ?? globalThis.fetch;
    if (init?.body === undefined) return send(url, init);
    return send(url, { ...init, body: guardBody(init.body, contentType(init.headers), methodOf(url)) });
  };
}

/**
 * A request body with every text Slack would show made broadcast-free; the same object when nothing changed.
 * @internal
 */
export function guardBody<B>(body: B, type = '', method = ''): B {
  if (typeof body === 'string') return guardString(body, type, method) as B;
  if (typeof FormData !== 'undefined' && body instanceof FormData) return guardForm(body, method) as B;
  return body;
}

/**
 * Web API arguments (or a response_url payload) as objects: every shown text made broadcast-free.
 * @internal
 */
export function guardSlackArguments(args: Record<string, unknown>, method = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(args)) out[field] = guardField(field, value, method);
  return out;
}

/** `chat.postMessage` from `https://slack.com/api/chat.postMessage`; '' for a response_url. */
export function methodOf(url: string | URL): string {
  return /\/api\/([\w.]+)(?:[?#].*)?$/.exec(String(url))?.[1] ?? '';
}

// ---- bodies ----------------------------------------------------------------------------

function guardString(body: string, type: string, method: string): string {
  if (/json/i.test(type)) {
    try {
      const parsed: unknown = JSON.parse(body);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const guarded = guardSlackArguments(parsed as Record<string, unknown>, method);
        return JSON.stringify(guarded) === JSON.stringify(parsed) ? body : JSON.stringify(guarded);
      }
    } catch {
      // Not JSON after all: fall through to the rule for raw text, which keeps JSON valid.
    }
    return neutraliseBroadcasts(body, 'slack-plain');
  }
  const params = new URLSearchParams(body);
  let changed = false;
  const out = new URLSearchParams();
  for (const [field, value] of params) {
    const guarded = guardField(field, value, method) as string;
    if (guarded !== value) changed = true;
    out.append(field, guarded);
  }
  return changed ? out.toString() : body;
}

function guardForm(form: FormData, method: string): FormData {
  let changed = false;
  const out = new FormData();
  for (const [field, value] of form) {
    if (typeof value !== 'string') {
      // A file's bytes: what was uploaded, not a message.
      out.append(field, value, value.name);
      continue;
    }
    const guarded = guardField(field, value, method) as string;
    if (guarded !== value) changed = true;
    out.append(field, guarded);
  }
  return changed ? out : form;
}

function contentType(headers: Record<string, string> | undefined): string {
  for (const [name, value] of Object.entries(headers ?? {})) if (name.toLowerCase() === 'content-type') return value;
  return '';
}

// ---- fields ----------------------------------------------------------------------------

/** Top-level arguments that are ids, tokens or data Slack hands back to us: never rewritten. */
const OPAQUE_FIELDS = new Set([
  'token',
  'metadata',
  'trigger_id',
  'interactivity_pointer',
  'response_url',
  'view_id',
  'external_id',
  'hash',
  'cursor',
]);

/** Top-level arguments whose text Slack renders as mrkdwn or markdown; any other text is treated as plain. */
const FIELD_DIALECT: Readonly<Record<string, MentionDialect>> = {
  text: 'slack-mrkdwn',
  initial_comment: 'slack-mrkdwn',
  user_auth_message: 'slack-mrkdwn',
  markdown_text: 'slack-markdown',
};

/** Arguments that carry JSON (the WebClient JSON-encodes every non-scalar argument), and how their text reads. */
const JSON_FIELD_DIALECT: Readonly<Record<string, MentionDialect>> = {
  blocks: 'slack-plain',
  user_auth_blocks: 'slack-plain',
  attachments: 'slack-mrkdwn',
  view: 'slack-plain',
  chunks: 'slack-plain',
  unfurls: 'slack-plain',
  prompts: 'slack-plain',
  loading_messages: 'slack-plain',
  files: 'slack-plain',
  dialog: 'slack-plain',
};

/**
 * Methods whose text Slack appends to what the message already holds: a piece may end in the
 * first half of a broadcast the next piece completes, so its end is sealed (shared/mentions.ts).
 */
const STREAM_PIECES = new Set(['chat.startStream', 'chat.appendStream']);

function guardField(field: string, value: unknown, method: string): unknown {
  if (OPAQUE_FIELDS.has(field)) return value;
  const continued = STREAM_PIECES.has(method);
  const jsonDialect = JSON_FIELD_DIALECT[field];
  if (jsonDialect) {
    const guard = (parsed: unknown): unknown => {
      if (field === 'attachments') return guardAttachments(parsed);
      const guarded = walk(parsed, jsonDialect);
      return field === 'chunks' && continued ? sealChunks(guarded) : guarded;
    };
    if (typeof value !== 'string') return guard(value);
    try {
      const parsed: unknown = JSON.parse(value);
      const guarded = guard(parsed);
      return JSON.stringify(guarded) === JSON.stringify(parsed) ? value : JSON.stringify(guarded);
    } catch {
      return neutraliseBroadcasts(value, 'slack-plain');
    }
  }
  if (field === 'markdown_text' && typeof value === 'string')
    return neutraliseBroadcasts(value, 'slack-markdown', { continued });
  if (typeof value === 'string') return guardText(value, FIELD_DIALECT[field] ?? 'slack-plain');
  if (value && typeof value === 'object') return walk(value, FIELD_DIALECT[field] ?? 'slack-plain');
  return value;
}

/** Keys inside blocks, views and attachments that hold ids, URLs or round-tripped data. */
const OPAQUE_KEYS = new Set([
  'type',
  'action_id',
  'block_id',
  'value',
  'callback_id',
  'private_metadata',
  'external_id',
  'metadata',
  'event_payload',
  'url',
  'image_url',
  'thumb_url',
  'video_url',
  'thumbnail_url',
  'author_link',
  'author_icon',
  'title_link',
  'footer_icon',
  'icon_url',
  'style',
  'id',
  'ts',
  'user_id',
  'team_id',
  'channel_id',
  'usergroup_id',
  'name',
  'initial_user',
  'initial_users',
  'initial_channel',
  'initial_channels',
  'initial_conversation',
  'initial_conversations',
  'initial_date',
  'initial_time',
  'initial_date_time',
  'timezone',
]);

/** The dialect a text object or chunk declares for its own strings. */
const TYPE_DIALECT: Readonly<Record<string, MentionDialect>> = {
  mrkdwn: 'slack-mrkdwn',
  plain_text: 'slack-plain',
  markdown: 'slack-markdown',
  markdown_text: 'slack-markdown',
};

function walk(value: unknown, dialect: MentionDialect): unknown {
  if (typeof value === 'string') return guardText(value, dialect);
  if (Array.isArray(value)) return value.map((item) => walk(item, dialect));
  if (!value || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  // Rich text spells a broadcast as an element of its own; show what it said, as text.
  if (object.type === 'broadcast')
    return { type: 'text', text: `@${WORD_JOINER}${typeof object.range === 'string' ? object.range : 'here'}` };
  if (object.type === 'usergroup')
    return {
      type: 'text',
      text: `@${WORD_JOINER}${typeof object.usergroup_id === 'string' ? object.usergroup_id : 'group'}`,
    };
  const own = (typeof object.type === 'string' ? TYPE_DIALECT[object.type] : undefined) ?? dialect;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(object)) out[key] = OPAQUE_KEYS.has(key) ? item : walk(item, own);
  return out;
}

/** Stream chunks: each markdown piece is followed by more text in the same message. */
function sealChunks(chunks: unknown): unknown {
  if (!Array.isArray(chunks)) return chunks;
  return chunks.map((chunk: unknown) => {
    const { type, text } = (chunk ?? {}) as { type?: unknown; text?: unknown };
    return type === 'markdown_text' && typeof text === 'string'
      ? { ...(chunk as object), text: neutraliseBroadcasts(text, 'slack-markdown', { continued: true }) }
      : chunk;
  });
}

/** Legacy attachments: mrkdwn, and a field's `value` is its text, not data. */
function guardAttachments(value: unknown): unknown {
  if (!Array.isArray(value)) return walk(value, 'slack-mrkdwn');
  return value.map((attachment: unknown) => {
    const guarded = walk(attachment, 'slack-mrkdwn');
    if (!guarded || typeof guarded !== 'object' || Array.isArray(guarded)) return guarded;
    const fields = (attachment as { fields?: unknown }).fields;
    if (Array.isArray(fields)) {
      (guarded as Record<string, unknown>).fields = fields.map((field: unknown) => {
        const shown = walk(field, 'slack-mrkdwn') as Record<string, unknown>;
        const text = (field as { value?: unknown } | null)?.value;
        return typeof text === 'string' ? { ...shown, value: guardText(text, 'slack-mrkdwn') } : shown;
      });
    }
    return guarded;
  });
}

/** A string that is a whole URL is an address, not text: left alone. */
function guardText(text: string, dialect: MentionDialect): string {
  if (/^(?:https?|mailto|slack):\S*$/i.test(text)) return text;
  return neutraliseBroadcasts(text, dialect);
}
