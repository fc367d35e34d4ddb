// The name and icon the bot posts with in a place whose profile sets `identity`:
// Slack's `username` and `icon_url` / `icon_emoji` on chat.postMessage (and postEphemeral).
// Slack honours them only with the `chat:write.customize` scope (manifest/slack*.yaml) and
// silently ignores them without it, so sending them is never an error.
//
// One place adds them: the thread's client (slack-connector.ts wraps it), so every card,
// note, plan and posted answer of the thread carries them, read per call (a reloaded
// profiles file renames the bot from its next post). chat.update keeps what the message was
// posted with, as Slack does. chat.startStream takes neither field: a streamed answer would
// show under the app's own name between cards that show the profile's, so a thread whose
// place has an identity has its answers posted and edited instead (slack-surface.ts).
import type { WebClient } from '@slack/web-api';

export interface SlackIdentity {
  name?: string;
  iconUrl?: string;
  iconEmoji?: string;
}

/** The Web API arguments of an identity; Slack's icon_emoji overrides icon_url, so only one is sent. */
function identityArguments(identity: SlackIdentity | undefined): {
  username?: string;
  icon_url?: string;
  icon_emoji?: string;
} {
  if (!identity) return {};
  return {
    ...(identity.name ? { username: identity.name } : {}),
    ...(identity.iconEmoji
      ? { icon_emoji: identity.iconEmoji }
      : identity.iconUrl
        ? { icon_url: identity.iconUrl }
        : {}),
  };
}

/** Whether an identity changes anything a post shows. */
export function hasIdentity(identity: SlackIdentity | undefined): boolean {
  return Object.keys(identityArguments(identity)).length > 0;
}

const DRESSED = new Set<PropertyKey>(['postMessage', 'postEphemeral']);

/** `client` whose chat.postMessage and chat.postEphemeral carry the identity `identityAt()` gives at each call (a caller's own fields win). */
export function withIdentity(client: WebClient, identityAt: () => SlackIdentity | undefined): WebClient {
  let chat: object | undefined;
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'chat' || value === null || typeof value !== 'object') return value;
      chat ??= new Proxy(value, {
        get(group, name, groupReceiver) {
          const method: unknown = Reflect.get(group, name, groupReceiver);
          if (!DRESSED.has(name) || typeof method !== 'function') return method;
          return (args: Record<string, unknown>) =>
            (method as (a: Record<string, unknown>) => Promise<unknown>).call(group, {
              ...identityArguments(identityAt()),
              ...args,
            });
        },
      });
      return chat;
    },
  });
}
