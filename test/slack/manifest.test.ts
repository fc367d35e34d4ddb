import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Manifest {
  features: { agent_view?: { agent_description: string }; slash_commands: { command: string }[] };
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { bot_events: string[] }; interactivity: { is_enabled: boolean }; socket_mode_enabled: boolean };
}

describe('manifest/slack.yaml', () => {
  it('asks for exactly the scopes and events the connector uses, with interactivity, Socket Mode and the agent view', async () => {
    const manifest = parse(await readFile(new URL('../../manifest/slack.yaml', import.meta.url), 'utf8')) as Manifest;
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(
      ['app_mentions:read', 'assistant:write', 'channels:history', 'chat:write', 'commands', 'groups:history', 'im:history', 'mpim:history', 'reactions:read', 'reactions:write', 'users:read'].sort(),
    );
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual(
      ['app_mention', 'message.channels', 'message.groups', 'message.im', 'message.mpim', 'reaction_added'].sort(),
    );
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.features.agent_view?.agent_description.length).toBeLessThanOrEqual(300);
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/agent']);
  });
});
