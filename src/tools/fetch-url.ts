// fetch_url: GET one http(s) URL and return what a reader would see: status, content type
// and the text (HTML reduced to readable text), within a time limit and a size cap.
//
// One idea: every limit is enforced while reading, not after. The timeout covers the whole
// exchange (headers and body), and the body is read up to the byte cap and then cancelled,
// so a slow or endless response costs at most the timeout and the cap.
//
// Only the public internet, and only the site that was approved (network-guard.ts): an IP
// host is judged before each request, and a name is resolved once, by the connection itself,
// which refuses special-purpose addresses and connects to the addresses it judged. A redirect
// to another origin is not followed: the approver saw one URL, so the answer names the new
// one and the model makes a new call, with its own approval. Same-origin redirects are
// followed, each new connection vetted again.
//
// undici and the HTML tokenizer (html-text.ts) are imported by the first fetch, not with this
// file: a bot that never fetches a page has no use for them.
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { capOutput, formatCount } from './output.js';
import {
  assertPublicHost,
  BlockedHostError,
  specialPurposeRange,
  vettedLookup,
  type AddressPolicy,
  type HostLookup,
} from './network-guard.js';
import { looksBinary } from './text-file.js';

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;

/** What fetch_url sends: undici's fetch, so that `dispatcher` (the vetted connection) applies. */
interface FetchInit {
  method: 'GET';
  redirect: 'manual';
  signal: AbortSignal;
  headers: Record<string, string>;
  dispatcher: Dispatcher;
}

/** The parts of a response fetch_url reads. */
interface FetchedResponse {
  status: number;
  statusText: string;
  url: string;
  headers: { get(name: string): string | null };
  body: ReadableStream<Uint8Array> | null;
}

export type FetchImpl = (url: string, init: FetchInit) => Promise<FetchedResponse>;

export interface FetchUrlOptions {
  /**
   * Tests only: a stand-in for undici's fetch. A real client must use `init.dispatcher`, or
   * host names reach the network without being judged.
   */
  fetchImpl?: FetchImpl;
  timeoutMs: number;
  maxBytes: number;
  maxOutputChars: number;
  /** Reach loopback and private networks too (default false). */
  allowPrivateNetworks?: boolean;
  /** How host names are resolved (default: the system resolver); used even with private networks allowed. */
  resolveHost?: HostLookup;
  /** Tests only: which addresses count as private (default: every special-purpose range). */
  addressPolicy?: AddressPolicy;
}

const MAX_REDIRECTS = 5;

const schema = z.object({
  url: z.string().describe('The http:// or https:// URL to GET.'),
});

type BodyKind = 'html' | 'text' | 'binary';

/** A redirect to another origin, handed back to the model instead of followed. */
interface OffsiteRedirect {
  kind: 'offsite-redirect';
  response: FetchedResponse;
  from: string;
  to: string;
}

export function fetchUrlTool(options: FetchUrlOptions): ToolDefinition {
  return defineTool({
    name: 'fetch_url',
    description:
      `GET a web page or file over http(s)${options.allowPrivateNetworks ? '' : ' on the public internet'}. ` +
      'Returns the status, content type and text; HTML is ' +
      'reduced to readable text, binary content is not shown. Redirects within the same site are followed; a redirect ' +
      `to another site is not: the answer gives its URL, to fetch with a new call. Times out after ${Math.round(options.timeoutMs / 1000)} s.`,
    schema,
    metadata: { risk: 'high', category: 'external', idempotent: true },
    async execute({ url: input }, { signal }) {
      const url = parseHttpUrl(input);
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error('timed out'));
      }, options.timeoutMs);
      const onAbort = (): void => controller.abort(signal.reason);
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      const undici = await import('undici');
      // One agent per call: its sockets resolve names through the guard, and none outlive the call.
      const agent = new undici.Agent({
        connect: {
          lookup: vettedLookup({
            resolveHost: options.resolveHost,
            addressPolicy: options.addressPolicy,
            allowPrivateNetworks: options.allowPrivateNetworks,
          }),
        },
      });
      try {
        const outcome = await fetchFollowing(
          url,
          controller.signal,
          agent,
          options.fetchImpl ?? ((target, init) => undici.fetch(target, init)),
          options,
        );
        if ('kind' in outcome) return describeOffsiteRedirect(outcome);
        const body = await readCapped(outcome, options.maxBytes);
        return await describeResponse(outcome, url, body, options, controller.signal);
      } catch (error) {
        const blocked = guardRefusal(error);
        if (blocked) throw new Error(blocked.message);
        if (timedOut) throw new Error(`timed out after ${options.timeoutMs / 1000} s: ${url}`);
        if (signal.aborted) throw error;
        throw new Error(`could not fetch ${url}: ${networkReason(error)}`);
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        await agent.destroy().catch(() => undefined);
      }
    },
  });
}

/**
 * GET, following same-origin redirects by hand so every hop is judged (an IP host here, a
 * name when the agent connects). A redirect to another origin (scheme, host or port) ends the
 * walk: following it would fetch a site nobody approved.
 */
async function fetchFollowing(
  start: string,
  signal: AbortSignal,
  dispatcher: Dispatcher,
  fetchImpl: FetchImpl,
  options: FetchUrlOptions,
): Promise<FetchedResponse | OffsiteRedirect> {
  let url = start;
  for (let hop = 0; ; hop++) {
    if (!options.allowPrivateNetworks)
      assertPublicHost(new URL(url).hostname, options.addressPolicy ?? specialPurposeRange);
    const response = await fetchImpl(url, {
      method: 'GET',
      redirect: 'manual',
      signal,
      dispatcher,
      headers: { 'user-agent': 'chat-agent fetch_url', accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    await response.body?.cancel().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new Error(`the redirect from ${url} points to an invalid URL: ${JSON.stringify(location)}`);
    }
    if (next.origin !== new URL(url).origin) return { kind: 'offsite-redirect', response, from: url, to: next.href };
    if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects (more than ${MAX_REDIRECTS})`);
    url = parseHttpUrl(next.href);
  }
}

function describeOffsiteRedirect({ response, from, to }: OffsiteRedirect): Record<string, unknown> {
  const answer: Record<string, unknown> = { url: from, status: response.status };
  if (response.statusText) answer.statusText = response.statusText;
  answer.redirectsTo = to;
  answer.text = '';
  answer.note =
    `${from} redirects to another site, ${to}, which was not fetched: this call was approved for ${new URL(from).origin} only. ` +
    'To read it, call fetch_url again with that URL (a new call, with its own approval).';
  return answer;
}

/** The guard's refusal, whether thrown directly or as the cause of fetch's "fetch failed". */
function guardRefusal(error: unknown): BlockedHostError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof BlockedHostError) return current;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return undefined;
}

function parseHttpUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new Error(`not a valid URL: ${JSON.stringify(input)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}: ${input}`);
  }
  return url.href;
}

/** The body up to `maxBytes`; the rest is never downloaded. */
async function readCapped(
  response: FetchedResponse,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, total), truncated: false };
    const room = maxBytes - total;
    if (value.length > room) {
      // Only bytes past the cap make the body truncated: one that exactly fills it is whole.
      chunks.push(value.subarray(0, room));
      total += room;
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks, total), truncated: true };
    }
    chunks.push(value);
    total += value.length;
  }
}

async function describeResponse(
  response: FetchedResponse,
  requested: string,
  body: { bytes: Uint8Array; truncated: boolean },
  options: FetchUrlOptions,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const contentType = response.headers.get('content-type') ?? '';
  const answer: Record<string, unknown> = {
    url: response.url || requested,
    status: response.status,
    contentType: contentType || null,
  };
  if (response.statusText) answer.statusText = response.statusText;
  const notes: string[] = [];
  if (body.truncated)
    notes.push(`the body is larger than ${formatCount(options.maxBytes)} bytes; only the start was read`);

  const kind = bodyKind(contentType, body.bytes);
  if (kind === 'binary') {
    notes.push(`binary content (${formatCount(body.bytes.length)} bytes read) is not shown`);
    answer.text = '';
  } else {
    const decoded = decode(body.bytes, contentType, body.truncated);
    let text = decoded;
    if (kind === 'html') {
      // In slices, yielding between them: a 2 MiB page never holds the event loop, and a stop ends it.
      const { htmlToTextAsync } = await import('./html-text.js');
      const page = await htmlToTextAsync(decoded, signal);
      if (page.title) answer.title = page.title;
      text = page.text;
    }
    answer.text = capOutput(text, options.maxOutputChars - 500);
  }
  if (notes.length > 0) answer.note = notes.join('; ');
  return answer;
}

function bodyKind(contentType: string, bytes: Uint8Array): BodyKind {
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (
    mime.startsWith('text/') ||
    /^application\/(?:json|xml|javascript|ecmascript|x-javascript|x-www-form-urlencoded|yaml|x-yaml|toml)$/.test(
      mime,
    ) ||
    mime.endsWith('+json') ||
    mime.endsWith('+xml')
  ) {
    return 'text';
  }
  if (mime !== '') return 'binary';
  // No content type: sniff, as a browser would.
  if (looksBinary(bytes)) return 'binary';
  const start = new TextDecoder().decode(bytes.subarray(0, 512)).trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') ? 'html' : 'text';
}

function decode(bytes: Uint8Array, contentType: string, truncated: boolean): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8');
  } catch {
    // An unknown charset label: UTF-8 is the best guess on today's web.
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes, { stream: truncated });
}

/** Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND) is its cause. */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}
