// The platform checks before a start: a platform that cannot be reached and one that refuses
// the token are told apart, and the line names the URL tried. Fakes on loopback; a closed
// port stands for an unreachable platform.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDiscord, checkSlack, maskedUrl } from '../../src/app/preflight.js';
import { FakeDiscord } from '../fakes/discord-server.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { freePort } from '../support/loopback-port.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('Slack before the start', () => {
  it('a token the Web API accepts passes, naming the bot and the workspace', async () => {
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    const result = await checkSlack('xoxb-test', slack.apiUrl);
    expect(result).toMatchObject({ name: 'Slack', status: 'ok' });
    expect(result.detail).toContain(`${slack.apiUrl}auth.test`);
  });

  it('a refused token is "did not accept", with Slack\'s error', async () => {
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    slack.failNext('auth.test', 'invalid_auth');
    const result = await checkSlack('xoxb-revoked', slack.apiUrl);
    expect(result).toEqual({
      name: 'Slack',
      status: 'fail',
      detail: `Slack did not accept SLACK_BOT_TOKEN (invalid_auth) at ${slack.apiUrl}auth.test`,
    });
  });

  it('a closed port is "could not reach", naming the URL and the system\'s reason', async () => {
    const port = await freePort();
    const result = await checkSlack('xoxb-test', `http://127.0.0.1:${port}/api/`);
    expect(result.status).toBe('fail');
    expect(result.detail).toBe(
      `Could not reach Slack at http://127.0.0.1:${port}/api/auth.test: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('a host that accepts the connection and never answers is "no answer within" the timeout', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/`;
    const result = await checkSlack('xoxb-test', url, { timeoutMs: 300 });
    expect(result).toEqual({
      name: 'Slack',
      status: 'fail',
      detail: `Could not reach Slack at ${url}auth.test: no answer within 0.3 s`,
    });
  });

  it('an https URL goes over TLS: a server that does not speak it is "could not reach", with the TLS reason', async () => {
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    const url = slack.apiUrl.replace(/^http:/, 'https:');
    const result = await checkSlack('xoxb-test', url, { timeoutMs: 5_000 });
    expect(result.status).toBe('fail');
    expect(result.detail).toMatch(
      new RegExp(
        `^Could not reach Slack at ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}auth\\.test: .*(SSL|ssl|TLS|tls|EPROTO|wrong version)`,
      ),
    );
  });

  it('a server that is not the Web API says which variable to check', async () => {
    const slack = await new FakeSlack().start();
    cleanups.push(() => slack.stop());
    slack.failNext('auth.test', { status: 502 });
    const result = await checkSlack('xoxb-test', slack.apiUrl);
    expect(result.detail).toBe(
      `Slack at ${slack.apiUrl}auth.test answered HTTP 502, not the Web API: check SLACK_API_URL`,
    );
  });
});

describe('Discord before the start', () => {
  it('the bot token passes GET /users/@me', async () => {
    const discord = await new FakeDiscord().start();
    cleanups.push(() => discord.stop());
    const result = await checkDiscord(discord.token, discord.apiUrl);
    expect(result).toMatchObject({ name: 'Discord', status: 'ok' });
    expect(result.detail).toContain(`${discord.apiUrl}/v10/users/@me`);
  });

  it('a refused token is "did not accept" (401)', async () => {
    const discord = await new FakeDiscord().start();
    cleanups.push(() => discord.stop());
    const result = await checkDiscord('not-the-token', discord.apiUrl);
    expect(result).toEqual({
      name: 'Discord',
      status: 'fail',
      detail: `Discord did not accept DISCORD_TOKEN (401: 401: Unauthorized) at ${discord.apiUrl}/v10/users/@me`,
    });
  });

  it('a closed port is "could not reach", naming the URL', async () => {
    const port = await freePort();
    const result = await checkDiscord('token', `http://127.0.0.1:${port}/api`);
    expect(result.detail).toBe(
      `Could not reach Discord at http://127.0.0.1:${port}/api/v10/users/@me: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });
});

describe('the start-up line', () => {
  it("masks a store URL's password", () => {
    expect(maskedUrl('postgresql://bot:hunter22@db.local:5432/bot')).toBe('postgresql://bot:***@db.local:5432/bot');
    expect(maskedUrl('sqlite://data/bot.sqlite')).toBe('sqlite://data/bot.sqlite');
  });
});
