// Who may use the bot and what asks first: the members, the admins, the permission mode, the
// shell commands that run without asking and how far an "always allow" reaches.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';

export const accessSettings = {
  ALLOWED_USERS: z
    .string()
    .default('*')
    .register(settingDocs, {
      section: 'Who may use it',
      description:
        'who may start or steer a conversation: member ids, comma-separated, or `*` (every member of the ' +
        "installing workspace, or on Discord of the servers in `DISCORD_GUILD_ID`; never another organisation's " +
        'users unless listed by id)',
    }),
  ADMINS: z.string().optional().register(settingDocs, {
    section: 'Who may use it',
    description:
      'member ids who may always approve and stop; without admins, whoever started a thread approves its calls',
    unset: 'none',
  }),
  PERMISSION_MODE: z
    .enum(['interactive', 'auto', 'read-only'])
    .default('interactive')
    .register(settingDocs, {
      section: 'Who may use it',
      description:
        '`interactive` (writes, shell and network ask), `auto` (nothing asks; commands still run in the sandbox, ' +
        'file tools still stay in the workspace), `read-only` (only reads run; the rest is refused without ' +
        'asking)',
    }),
  SHELL_ALLOWLIST: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'shell commands that run without asking in interactive mode, comma-separated (`git status, git log *, npm ' +
        'test`); see [The shell allow-list](security.md#the-shell-allow-list)',
      unset: 'none',
    }),
  GRANT_SCOPE: z.enum(['thread', 'channel']).default('thread').register(settingDocs, {
    section: 'Who may use it',
    description: 'where "always allow" applies: `thread` or `channel`',
  }),
};
