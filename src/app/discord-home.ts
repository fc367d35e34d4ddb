// Which Discord servers are home, in words: under `ALLOWED_USERS=*` the members of the home
// servers are the bot's members. DISCORD_GUILD_ID names them; unset, every server the bot is
// in counts, and Discord creates bots public (the application's `bot_public`): anyone can add
// the bot to a server of their own, where they are members and approve their own commands.
// So when nobody chose, the start-up (connectors/discord/home-guilds.ts) and `npm run doctor`
// ask Discord whether the application is public (`GET /applications/@me`) and, if it is, or
// if that cannot be told, warn and say how to close it. A failed lookup never stops a start.
import { z } from 'zod';
import { discordGuildIds, type Config } from '../config.js';
import { call, DEFAULT_DISCORD_API_URL, type CheckOptions, type CheckResult } from './preflight.js';

/** The fields of Discord's application object this reads (`GET /applications/@me`). */
const DiscordApplicationSchema = z.object({
  id: z.string(),
  name: z.string(),
  bot_public: z.boolean(),
});
export type DiscordApplication = z.infer<typeof DiscordApplicationSchema>;

const PUBLIC_BOT_FIX =
  'Set DISCORD_GUILD_ID to your server id (several: comma-separated), and turn off "Public Bot" in the Discord Developer Portal → your application → Bot tab';

export interface HomeVerdict {
  status: 'ok' | 'warn';
  detail: string;
}

/** What to say when DISCORD_GUILD_ID lists the home servers: nothing to ask Discord. */
export function listedVerdict(guildIds: readonly string[]): HomeVerdict {
  return {
    status: 'ok',
    detail: `home servers ${guildIds.join(', ')} (DISCORD_GUILD_ID): their members are members; in any other server everyone is an outsider`,
  };
}

/** What to say when no server is listed: by the application's `bot_public`, or why it could not be read. */
export function unlistedVerdict(application: DiscordApplication | { error: string }): HomeVerdict {
  if ('error' in application) {
    return {
      status: 'warn',
      detail:
        `DISCORD_GUILD_ID is not set, so every server the bot is in counts as home, and whether the application is public could not be checked (${application.error}). ` +
        `If it is, anyone can add this bot to their own server and approve their own commands there. ${PUBLIC_BOT_FIX}`,
    };
  }
  if (application.bot_public) {
    return {
      status: 'warn',
      detail:
        `DISCORD_GUILD_ID is not set and the application "${application.name}" is public: anyone can add this bot to their own server and approve their own commands there (every server it is in counts as home). ` +
        PUBLIC_BOT_FIX,
    };
  }
  return {
    status: 'ok',
    detail: `DISCORD_GUILD_ID is not set: every server the bot is in counts as home; "Public Bot" is off, so only the application's owner can add it to a server`,
  };
}

/** Read `GET /applications/@me`'s answer: the application, or why there is none. */
export function readApplication(body: unknown): DiscordApplication | { error: string } {
  const parsed = DiscordApplicationSchema.safeParse(body);
  return parsed.success ? parsed.data : { error: "Discord's answer has no bot_public flag" };
}

/** `npm run doctor`: the home servers, asking Discord when none is listed (CHECK_TIMEOUT_MS at most). */
export async function checkDiscordHome(
  config: Pick<Config, 'DISCORD_TOKEN' | 'DISCORD_API_URL' | 'DISCORD_GUILD_ID'>,
  options: CheckOptions = {},
): Promise<CheckResult> {
  const guildIds = discordGuildIds(config.DISCORD_GUILD_ID);
  if (guildIds.length > 0) return { name: 'Discord servers', ...listedVerdict(guildIds) };
  const url = `${(config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL).replace(/\/+$/, '')}/v10/applications/@me`;
  const answer = await call(
    'Discord',
    url,
    { headers: { authorization: `Bot ${(config.DISCORD_TOKEN ?? '').replace(/^(Bot|Bearer)\s*/i, '')}` } },
    options,
  );
  let application: DiscordApplication | { error: string };
  if ('unreachable' in answer) application = { error: answer.unreachable };
  else if (answer.status !== 200) application = { error: `GET ${url} answered HTTP ${answer.status}` };
  else application = readApplication(answer.json);
  return { name: 'Discord servers', ...unlistedVerdict(application) };
}
