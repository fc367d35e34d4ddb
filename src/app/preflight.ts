// The platform checks run before anything is created on disk: one authenticated call to
// each configured platform, telling a platform that could not be reached (a wrong
// SLACK_API_URL, no network, a proxy's TLS) from one that refused the token, and naming the
// URL tried, so "it does not start" comes with the one thing to fix.
//
//   Slack    POST {SLACK_API_URL}auth.test      ok:false (invalid_auth…) → rejected
//   Discord  GET  {DISCORD_API_URL}/v10/users/@me   401 → rejected
//
// `npm run doctor` runs the same checks (src/app/doctor.ts) and the model's. Both end by
// saying what runs where (`whatRunsWhere`): the model, the store, the workspace, the shell.
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { discordConfigured, slackConfigured } from '../config.js';

const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';
export const DEFAULT_DISCORD_API_URL = 'https://discord.com/api';
/** Generous for a slow link, short enough that a silent host does not look like a hang. */
export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckResult {
  /** What was checked, e.g. `Slack`, `model openai:gpt-4.1`. */
  name: string;
  status: 'ok' | 'warn' | 'fail';
  /** One line: what answered (ok), or what to fix. */
  detail: string;
}

export interface CheckOptions {
  timeoutMs?: number;
}

/** Every configured platform, checked in parallel; failures only (empty: all passed). */
export async function platformProblems(config: Config, options: CheckOptions = {}): Promise<string[]> {
  const results = await checkPlatforms(config, options);
  return results.filter((result) => result.status === 'fail').map((result) => result.detail);
}

export function checkPlatforms(config: Config, options: CheckOptions = {}): Promise<CheckResult[]> {
  return Promise.all([
    ...(slackConfigured(config) && config.SLACK_BOT_TOKEN
      ? [checkSlack(config.SLACK_BOT_TOKEN, config.SLACK_API_URL, options)]
      : []),
    ...(discordConfigured(config) && config.DISCORD_TOKEN
      ? [checkDiscord(config.DISCORD_TOKEN, config.DISCORD_API_URL, options)]
      : []),
  ]);
}

/** @internal */
export async function checkSlack(
  token: string,
  apiUrl = DEFAULT_SLACK_API_URL,
  options: CheckOptions = {},
): Promise<CheckResult> {
  const url = new URL('auth.test', apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).href;
  const answer = await call('Slack', url, { method: 'POST', headers: { authorization: `Bearer ${token}` } }, options);
  if ('unreachable' in answer) return { name: 'Slack', status: 'fail', detail: answer.unreachable };
  const body = answer.json as { ok?: boolean; error?: string; team?: string; user?: string } | undefined;
  if (body?.ok === true)
    return {
      name: 'Slack',
      status: 'ok',
      detail: `SLACK_BOT_TOKEN accepted at ${url} (bot ${body.user ?? '?'} in ${body.team ?? '?'})`,
    };
  if (body && typeof body.error === 'string')
    return { name: 'Slack', status: 'fail', detail: `Slack did not accept SLACK_BOT_TOKEN (${body.error}) at ${url}` };
  return {
    name: 'Slack',
    status: 'fail',
    detail: `Slack at ${url} answered HTTP ${answer.status}, not the Web API: check SLACK_API_URL`,
  };
}

/** @internal */
export async function checkDiscord(
  token: string,
  apiUrl = DEFAULT_DISCORD_API_URL,
  options: CheckOptions = {},
): Promise<CheckResult> {
  const url = `${apiUrl.replace(/\/+$/, '')}/v10/users/@me`;
  const answer = await call('Discord', url, { headers: { authorization: `Bot ${token}` } }, options);
  if ('unreachable' in answer) return { name: 'Discord', status: 'fail', detail: answer.unreachable };
  const body = answer.json as { id?: string; username?: string; message?: string } | undefined;
  if (answer.status === 200 && body?.id)
    return {
      name: 'Discord',
      status: 'ok',
      detail: `DISCORD_TOKEN accepted at ${url} (bot ${body.username ?? body.id})`,
    };
  if (answer.status === 401 || answer.status === 403) {
    return {
      name: 'Discord',
      status: 'fail',
      detail: `Discord did not accept DISCORD_TOKEN (${answer.status}${body?.message ? `: ${body.message}` : ''}) at ${url}`,
    };
  }
  return {
    name: 'Discord',
    status: 'fail',
    detail: `Discord at ${url} answered HTTP ${answer.status}, not its API: check DISCORD_API_URL`,
  };
}

export type Answer = { status: number; json: unknown } | { unreachable: string };

/** The most of an answer's body read: a platform's check answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface CallInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
}

/**
 * One HTTP call; a failure to get any answer becomes "Could not reach <who> at <url>: <why>".
 * On node:http, not fetch: fetch's first use loads Node's own copy of undici, about 12 MB and
 * a tenth of a second, which every start would pay for this one call. Redirects are not
 * followed: a platform's API answers where it is, and a redirect shows as an HTTP status to
 * check the URL by.
 */
export async function call(who: string, url: string, init: CallInit, options: CheckOptions = {}): Promise<Answer> {
  const timeoutMs = options.timeoutMs ?? CHECK_TIMEOUT_MS;
  try {
    const { status, body } = await request(url, init, AbortSignal.timeout(timeoutMs));
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    return { status, json };
  } catch (error) {
    return { unreachable: `Could not reach ${who} at ${url}: ${networkReason(error, timeoutMs)}` };
  }
}

async function request(url: string, init: CallInit, signal: AbortSignal): Promise<{ status: number; body: string }> {
  const { request: send } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const outgoing = send(url, { method: init.method ?? 'GET', headers: init.headers, signal }, (response) => {
      const pieces: Buffer[] = [];
      let size = 0;
      response.on('data', (piece: Buffer) => {
        size += piece.length;
        if (size <= MAX_ANSWER_BYTES) pieces.push(piece);
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(pieces).toString('utf8') }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/**
 * Why no answer came, in the words of the system call (`connect ECONNREFUSED 127.0.0.1:9`,
 * `getaddrinfo ENOTFOUND …`, a certificate error), found under any wrapping error's `cause`.
 */
function networkReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs / 1000} s`;
  let reason = error;
  while (reason instanceof Error && reason.cause instanceof Error) reason = reason.cause;
  if (reason instanceof AggregateError && reason.errors[0] instanceof Error) reason = reason.errors[0];
  const code = (reason as { code?: string } | undefined)?.code;
  const message = reason instanceof Error ? reason.message : String(reason);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** The start-up line's fields: what runs where (the core logs the shell sandbox's actual decision). */
export function whatRunsWhere(config: Config): Record<string, unknown> {
  return {
    model: config.MODEL,
    store: maskedUrl(config.STORE_URL),
    workspace: resolve(config.WORKSPACE_DIR),
    shellSandbox: config.SHELL_SANDBOX,
    permissionMode: config.PERMISSION_MODE,
  };
}

/**
 * A URL with its password (a database's) replaced: the line is for reading over a shoulder.
 * @internal
 */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return url;
  }
}
