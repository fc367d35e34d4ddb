// fetch_url: GET one http(s) URL and return what a reader would see: status, content type
// and the text (HTML reduced to readable text), within a time limit and a size cap.
//
// One idea: every limit is enforced while reading, not after. The timeout covers the whole
// exchange (headers and body), and the body is read up to the byte cap and then cancelled,
// so a slow or endless response costs at most the timeout and the cap.
//
// Private addresses (localhost, cloud metadata, the office network) are refused unless
// allowed, at every redirect hop (network-guard.ts).
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { htmlToText } from './html-text.js';
import { capOutput, formatCount } from './output.js';
import { assertPublicUrl, type HostLookup } from './network-guard.js';
import { looksBinary } from './text-file.js';

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;

export interface FetchUrlOptions {
  fetchImpl: typeof fetch;
  timeoutMs: number;
  maxBytes: number;
  maxOutputChars: number;
  /** Reach loopback and private networks too (default false). */
  allowPrivateNetworks?: boolean;
  resolveHost?: HostLookup;
}

const MAX_REDIRECTS = 5;

const schema = z.object({
  url: z.string().describe('The http:// or https:// URL to GET.'),
});

type BodyKind = 'html' | 'text' | 'binary';

export function fetchUrlTool(options: FetchUrlOptions): ToolDefinition {
  return defineTool({
    name: 'fetch_url',
    description:
      'GET a web page or file over http(s). Returns the status, content type and text; HTML is reduced to readable ' +
      `text, binary content is not shown. Times out after ${Math.round(options.timeoutMs / 1000)} s.`,
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
      try {
        const response = await fetchFollowing(url, controller.signal, options);
        const body = await readCapped(response, options.maxBytes);
        return describeResponse(response, url, body, options);
      } catch (error) {
        if (timedOut) throw new Error(`timed out after ${options.timeoutMs / 1000} s: ${url}`);
        if (signal.aborted) throw error;
        throw new Error(`could not fetch ${url}: ${networkReason(error)}`);
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      }
    },
  });
}

/** GET, following redirects by hand so every hop is checked against the network guard. */
async function fetchFollowing(start: string, signal: AbortSignal, options: FetchUrlOptions): Promise<Response> {
  let url = start;
  for (let hop = 0; ; hop++) {
    if (!options.allowPrivateNetworks) await assertPublicUrl(new URL(url), options.resolveHost);
    const response = await options.fetchImpl(url, {
      method: 'GET',
      redirect: 'manual',
      signal,
      headers: { 'user-agent': 'chat-agent fetch_url', accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects (more than ${MAX_REDIRECTS})`);
    await response.body?.cancel().catch(() => undefined);
    url = parseHttpUrl(new URL(location, url).href);
  }
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
async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  // Typed `any` chunks in the fetch typings; a fetch body stream yields bytes.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
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

function describeResponse(
  response: Response,
  requested: string,
  body: { bytes: Uint8Array; truncated: boolean },
  options: FetchUrlOptions,
): Record<string, unknown> {
  const contentType = response.headers.get('content-type') ?? '';
  const answer: Record<string, unknown> = {
    url: response.url || requested,
    status: response.status,
    contentType: contentType || null,
  };
  if (response.statusText) answer.statusText = response.statusText;
  const notes: string[] = [];
  if (body.truncated) notes.push(`the body is larger than ${formatCount(options.maxBytes)} bytes; only the start was read`);

  const kind = bodyKind(contentType, body.bytes);
  if (kind === 'binary') {
    notes.push(`binary content (${formatCount(body.bytes.length)} bytes read) is not shown`);
    answer.text = '';
  } else {
    const decoded = decode(body.bytes, contentType, body.truncated);
    let text = decoded;
    if (kind === 'html') {
      const page = htmlToText(decoded);
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
    /^application\/(?:json|xml|javascript|ecmascript|x-javascript|x-www-form-urlencoded|yaml|x-yaml|toml)$/.test(mime) ||
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
