// The Slack manifests (manifest/slack.yaml for Socket Mode, manifest/slack-http.yaml for HTTP
// mode) kept in line with what the connector really handles: the scopes its Web API calls and
// events need and no more, the events it listens to, its slash command, interactivity, the
// Messages tab for DMs, and, in HTTP mode, request URLs that reach the path the bot serves.
// The two files differ only where the modes differ, so a change made to one is made to both.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { encodeValue, promptActionId } from '../../connectors/slack/actions.js';
import { blockActions, slashCommand, urlVerification } from '../fakes/slack-payloads.js';
import { sendEvent, sendInteraction, sendSlashCommand } from '../fakes/slack-signer.js';
import { bootSlackBot, SECRET, type SlackBot } from './slack-harness.js';

interface Manifest {
  features: {
    app_home?: { home_tab_enabled: boolean; messages_tab_enabled: boolean; messages_tab_read_only_enabled: boolean };
    agent_view?: { agent_description: string };
    slash_commands: { command: string; url?: string }[];
  };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { bot_events: string[]; request_url?: string };
    interactivity: { is_enabled: boolean; request_url?: string };
    socket_mode_enabled: boolean;
  };
}

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (name: string) => parse(readFileSync(join(ROOT, 'manifest', name), 'utf8')) as Manifest;
const socketMode = read('slack.yaml');
const httpMode = read('slack-http.yaml');

/** The connector's own source (tests excluded): what it listens to and which Web API methods it calls. */
const connectorSource = readdirSync(join(ROOT, 'connectors/slack'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => readFileSync(join(ROOT, 'connectors/slack', file), 'utf8'))
  .join('\n');
const matches = (pattern: RegExp) => [...new Set([...connectorSource.matchAll(pattern)].map((m) => m[1]!))].sort();

/** Each Web API method the connector calls, and the bot scope it needs (none for auth.test and views.open). */
const METHOD_SCOPES: Record<string, string[]> = {
  'auth.test': [],
  'chat.postMessage': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.update': ['chat:write'],
  'chat.startStream': ['chat:write'],
  'chat.appendStream': ['chat:write'],
  'chat.stopStream': ['chat:write'],
  'reactions.add': ['reactions:write'],
  'reactions.remove': ['reactions:write'],
  'users.info': ['users:read'],
  'assistant.threads.setStatus': ['assistant:write'],
  'assistant.threads.setSuggestedPrompts': ['assistant:write'],
  // agent-session.ts: a thread's agent session (status, title) takes the bot's chat:write.
  'agents.sessions.setStatus': ['chat:write'],
  // card-index.ts reads a thread after a crash: in whatever kind of conversation the thread is.
  'conversations.replies': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
  // profile-channels.ts: at start, each channel a profile names, public or private.
  'conversations.info': ['channels:read', 'groups:read'],
  'views.open': [],
  // file-source.ts: a file an event names only by id (Slack Connect) is looked up first.
  'files.info': ['files:read'],
  // file-sink.ts: attach_file (getUploadURLExternal, the upload, completeUploadExternal).
  'files.uploadV2': ['files:write'],
};

/** Not a Web API method: the GET of a shared file's url_private_download with the bot token. */
const DOWNLOAD_SCOPE = 'files:read';

/** Not a method either: a post's own name and icon (post-identity.ts: a profile's `identity`), which Slack ignores without this scope. */
const IDENTITY_SCOPE = 'chat:write.customize';

/** Each event subscription and the scope Slack requires for it ('' for none). */
const EVENT_SCOPES: Record<string, string> = {
  // The Messages tab (messages-tab.ts): the assistant events need the Agents feature's scope.
  app_home_opened: '',
  app_context_changed: 'assistant:write',
  assistant_thread_started: 'assistant:write',
  assistant_thread_context_changed: 'assistant:write',
  // Slack's Stop button on an agent session (stop-button.ts): sessions take chat:write.
  agent_session_stopped: 'chat:write',
  app_mention: 'app_mentions:read',
  'message.channels': 'channels:history',
  'message.groups': 'groups:history',
  'message.im': 'im:history',
  'message.mpim': 'mpim:history',
  reaction_added: 'reactions:read',
};

describe('the Slack manifests', () => {
  it('the connector calls only Web API methods whose scopes the table above knows', () => {
    // `core.files.register…` is the bot's own registry of file sources and sinks, not Slack's.
    const called = matches(
      /(?<!core)\.((?:auth|chat|reactions|users|conversations|views|files|assistant\s*\.\s*threads|agents\s*\.\s*sessions)\s*\.\s*[a-zA-Z0-9]+)\s*\(/g,
    ).map((method) => method.replace(/\s+/g, ''));
    expect([...new Set(called)].sort()).toEqual(Object.keys(METHOD_SCOPES).sort());
  });

  for (const [name, manifest] of [
    ['slack.yaml', socketMode],
    ['slack-http.yaml', httpMode],
  ] as const) {
    describe(name, () => {
      it('asks for exactly the scopes the calls, the events and the slash command need', () => {
        const needed = new Set([
          ...Object.values(METHOD_SCOPES).flat(),
          ...manifest.settings.event_subscriptions.bot_events
            .map((event) => EVENT_SCOPES[event] ?? `unknown event ${event}`)
            .filter(Boolean),
          ...(manifest.features.slash_commands.length > 0 ? ['commands'] : []),
          ...(/url_private_download/.test(connectorSource) ? [DOWNLOAD_SCOPE] : []),
          ...(/\busername:/.test(connectorSource) && /\bicon_(url|emoji)\b/.test(connectorSource)
            ? [IDENTITY_SCOPE]
            : []),
        ]);
        expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...needed].sort());
      });

      it('subscribes to exactly the events the connector listens to, in every kind of conversation', () => {
        const listened = matches(/\bapp\.event\('([a-z_]+)'/g);
        expect(listened).toEqual([
          'agent_session_stopped',
          'app_context_changed',
          'app_home_opened',
          'app_mention',
          'assistant_thread_context_changed',
          'assistant_thread_started',
          'message',
          'reaction_added',
        ]);
        expect(
          [...new Set(manifest.settings.event_subscriptions.bot_events.map((event) => event.split('.')[0]))].sort(),
        ).toEqual(listened);
        // A mention or a reply may come from a public or private channel, a DM or a group DM.
        expect(
          manifest.settings.event_subscriptions.bot_events.filter((event) => event.startsWith('message.')).sort(),
        ).toEqual(['message.channels', 'message.groups', 'message.im', 'message.mpim']);
      });

      it('declares the slash command the connector answers, interactivity for its buttons, and the Messages tab for DMs', () => {
        expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(matches(/\bapp\.command\('([^']+)'/g));
        expect(connectorSource).toMatch(/\bapp\.action\(/);
        expect(manifest.settings.interactivity.is_enabled).toBe(true);
        expect(manifest.features.app_home).toEqual({
          home_tab_enabled: false,
          messages_tab_enabled: true,
          messages_tab_read_only_enabled: false,
        });
        expect(manifest.features.agent_view?.agent_description.length).toBeLessThanOrEqual(300);
      });
    });
  }

  it('slack.yaml is Socket Mode and names no request URL', () => {
    expect(socketMode.settings.socket_mode_enabled).toBe(true);
    expect(socketMode.settings.event_subscriptions.request_url).toBeUndefined();
    expect(socketMode.settings.interactivity.request_url).toBeUndefined();
    expect(socketMode.features.slash_commands.every((c) => c.url === undefined)).toBe(true);
  });

  it('slack-http.yaml is HTTP mode with every request URL a YOUR-HOST placeholder on /slack/events', () => {
    expect(httpMode.settings.socket_mode_enabled).toBe(false);
    const urls = [
      httpMode.settings.event_subscriptions.request_url,
      httpMode.settings.interactivity.request_url,
      ...httpMode.features.slash_commands.map((c) => c.url),
    ];
    expect(urls).toEqual([
      'https://YOUR-HOST/slack/events',
      'https://YOUR-HOST/slack/events',
      'https://YOUR-HOST/slack/events',
    ]);
  });

  it('the two manifests are the same app: they differ only in the Socket Mode switch and the request URLs', () => {
    const withoutModeDifferences = (manifest: Manifest): Manifest => {
      const copy = structuredClone(manifest);
      delete copy.settings.event_subscriptions.request_url;
      delete copy.settings.interactivity.request_url;
      for (const command of copy.features.slash_commands) delete command.url;
      copy.settings.socket_mode_enabled = false;
      return copy;
    };
    expect(withoutModeDifferences(httpMode)).toEqual(withoutModeDifferences(socketMode));
  });
});

describe('slack-http.yaml against the bot in HTTP mode', () => {
  let bot: SlackBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('its event, interactivity and /agent URLs reach the bot once YOUR-HOST is filled in', async () => {
    bot = await bootSlackBot();
    const origin = new URL(bot.url).origin;
    const at = (url: string | undefined) => url!.replace('https://YOUR-HOST', origin);

    // Events: Slack's URL check when the Request URL is saved.
    const verified = await sendEvent(
      at(httpMode.settings.event_subscriptions.request_url),
      SECRET,
      urlVerification('manifest-check'),
    );
    expect(verified.status).toBe(200);
    expect(verified.body).toContain('manifest-check');

    // Interactivity: a click (on a prompt nobody knows: it is answered privately).
    const clicked = await sendInteraction(
      at(httpMode.settings.interactivity.request_url),
      SECRET,
      blockActions({
        actionId: promptActionId('once'),
        value: encodeValue({ item: 'no-such-item', choice: 'once' }),
        messageTs: '1700000000.000100',
        responseUrl: bot.slack.responseUrl('click'),
      }),
    );
    expect(clicked.status).toBe(200);
    await bot.slack.waitForResponse('click');

    // The slash command.
    const command = httpMode.features.slash_commands[0]!;
    const answered = await sendSlashCommand(
      at(command.url),
      SECRET,
      slashCommand({ command: command.command, text: 'help', responseUrl: bot.slack.responseUrl('help') }),
    );
    expect(answered.status).toBe(200);
    expect(JSON.stringify(await bot.slack.waitForResponse('help'))).toContain('How to use me');

    // The path matters: anywhere else is not the bot's.
    expect((await sendEvent(`${origin}/slack/other`, SECRET, urlVerification('elsewhere'))).status).toBe(404);
  });
});
