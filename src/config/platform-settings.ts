// The chat platforms: Slack's tokens and Web API, Discord's token, REST API and home servers.
// Which of them starts is decided by which tokens are set (src/config-checks.ts).
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { httpUrl } from './setting-values.js';

export const platformSettings = {
  SLACK_BOT_TOKEN: z.string().startsWith('xoxb-', 'must be a bot token (xoxb-…)').optional().register(settingDocs, {
    section: 'Slack',
    description: 'the bot token (`xoxb-…`)',
    unset: 'none',
  }),
  SLACK_APP_TOKEN: z
    .string()
    .startsWith('xapp-', 'must be an app-level token (xapp-…)')
    .optional()
    .register(settingDocs, {
      section: 'Slack',
      description: 'an app-level token (`xapp-…`): Socket Mode',
      unset: 'none',
    }),
  SLACK_SIGNING_SECRET: z.string().min(1).optional().register(settingDocs, {
    section: 'Slack',
    description: "HTTP mode: verifies Slack's requests",
    unset: 'none',
  }),
  SLACK_API_URL: httpUrl('https://slack.com/api/').optional().register(settingDocs, {
    section: 'Slack',
    description: 'the Web API base URL: GovSlack (`https://slack-gov.com/api/`), a proxy',
    unset: 'Slack',
  }),
  DISCORD_TOKEN: z.string().trim().min(1).optional().register(settingDocs, {
    section: 'Discord',
    description: 'the Discord bot token (Developer Portal → Bot); set, the Discord connector starts',
    unset: 'none',
  }),
  DISCORD_API_URL: httpUrl('https://discord.com/api').optional().register(settingDocs, {
    section: 'Discord',
    description: 'the Discord REST base URL without the version (`https://discord.com/api`), for proxies and tests',
    unset: 'Discord',
  }),
  // Each id is checked in src/config-checks.ts; discordGuildIds reads the list.
  DISCORD_GUILD_ID: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Discord',
      description:
        "the bot's home servers, by id, comma-separated for several: their members are its members (under " +
        '`ALLOWED_USERS=*`), and a DM counts when the person is a member of one; in any other server everyone is ' +
        'an outsider, refused unless listed by id in `ALLOWED_USERS` or `ADMINS`. The slash commands are ' +
        'registered in each (they appear at once). Unset: every server the bot is in counts, the commands are ' +
        'global (Discord may take up to an hour to show them), and start-up and `npm run doctor` warn when the ' +
        'application is public (anyone could add the bot to a server of their own and approve their own commands ' +
        'there)',
      unset: 'none: every server the bot is in',
    }),
};
