// Plays Slack calling a bot in HTTP mode: signs a raw body the way Slack does (v0 HMAC-SHA256
// of `v0:${timestamp}:${rawBody}`) and POSTs Events API bodies, interactivity payloads and
// slash commands with Slack's exact content types. The one idea: the signature covers the exact
// bytes sent, so the body is built as a string once, signed, and sent as that same string.
// Bolt acknowledges events BEFORE its listeners run, so the answer here says only that the bot
// accepted the request; what the bot did next is read from FakeSlack (`waitForCall`).
import { createHmac } from 'node:crypto';
import type {
  BlockActionsPayload,
  EventCallbackBody,
  SlashCommandFields,
  UrlVerificationBody,
} from './slack-payloads.js';

export interface SlackSignatureHeaders {
  'x-slack-request-timestamp': string;
  'x-slack-signature': string;
}

/** Slack's request signature for `rawBody`. `timestamp` in unix seconds, default now. */
export function signSlackRequest(
  secret: string,
  rawBody: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): SlackSignatureHeaders {
  const digest = createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex');
  return { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': `v0=${digest}` };
}

export interface SlackDelivery {
  /** 200 when the bot accepted it; 401 for a bad or stale signature; 400 for a body bolt cannot parse. */
  status: number;
  /** The raw answer (empty for an acknowledged event; `{"challenge":…}` for url_verification). */
  body: string;
  headers: Headers;
}

export interface SendOptions {
  /** Unix seconds for the signature; an old one (> 5 min) must be refused with 401. */
  timestamp?: number;
  /** Send this signature instead of the right one (a forged request). */
  signature?: string;
  /** Give up after this long (default 10 s), so a bot that never answers fails the test, not hangs it. */
  timeoutMs?: number;
}

export interface EventRetryOptions extends SendOptions {
  /** Slack's redelivery counter (`x-slack-retry-num`: 1, 2, 3) when the bot did not ack in 3 s. */
  retryNum?: number;
  /** `x-slack-retry-reason`, e.g. `http_timeout`, `http_error`. */
  retryReason?: string;
}

/** POST `rawBody` signed with `secret`. The building block of the senders below. */
export async function sendSigned(
  botUrl: string,
  secret: string,
  rawBody: string,
  contentType: string,
  options: SendOptions = {},
  extraHeaders: Record<string, string> = {},
): Promise<SlackDelivery> {
  const signed = signSlackRequest(secret, rawBody, options.timestamp);
  const response = await fetch(botUrl, {
    method: 'POST',
    headers: {
      // Bolt compares the content type with `===` (a `; charset=utf-8` suffix on a form body
      // answers 400), so it is set explicitly and the body is always a string: fetch would add
      // the charset itself for a URLSearchParams body.
      'content-type': contentType,
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      ...signed,
      ...(options.signature === undefined ? {} : { 'x-slack-signature': options.signature }),
      ...extraHeaders,
    },
    body: rawBody,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Deliver an Events API body (`event_callback` or `url_verification`) as Slack does: signed JSON. */
export async function sendEvent(
  botUrl: string,
  secret: string,
  body: EventCallbackBody<{ type: string }> | UrlVerificationBody,
  options: EventRetryOptions = {},
): Promise<SlackDelivery> {
  const retry: Record<string, string> = {};
  if (options.retryNum !== undefined) retry['x-slack-retry-num'] = String(options.retryNum);
  if (options.retryReason !== undefined) retry['x-slack-retry-reason'] = options.retryReason;
  return sendSigned(botUrl, secret, JSON.stringify(body), 'application/json', options, retry);
}

/** Deliver an interactivity payload (`block_actions`, …) as `payload=<urlencoded JSON>`. */
export async function sendInteraction(
  botUrl: string,
  secret: string,
  payload: BlockActionsPayload | { type: string },
  options: SendOptions = {},
): Promise<SlackDelivery> {
  const rawBody = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return sendSigned(botUrl, secret, rawBody, 'application/x-www-form-urlencoded', options);
}

/** Deliver a slash command: its fields form-encoded, with no `payload` wrapper. */
export async function sendSlashCommand(
  botUrl: string,
  secret: string,
  fields: SlashCommandFields | Record<string, string>,
  options: SendOptions = {},
): Promise<SlackDelivery> {
  return sendSigned(
    botUrl,
    secret,
    new URLSearchParams(fields).toString(),
    'application/x-www-form-urlencoded',
    options,
  );
}
