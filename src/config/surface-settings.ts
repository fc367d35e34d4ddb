// What people see of the agent in a thread: how tool calls show, Slack's suggested prompts
// and loading lines, and which built-in tools the model is offered.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { jsonList } from './setting-values.js';

export const surfaceSettings = {
  TOOL_DISPLAY: z
    .enum(['cards', 'compact'])
    .default('cards')
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'how tool calls show in a thread: `cards` (a message per call, updated in place) or `compact` (the calls ' +
        'as steps of one reply; a call that asks a person still gets its own card with the buttons)',
    }),
  SUGGESTED_PROMPTS: jsonList(
    z.object({ title: z.string().trim().min(1).max(75), message: z.string().trim().min(1).max(2_000) }).strict(),
    4,
    '[{"title": "Summarise", "message": "Summarise this thread"}]',
  )
    .optional()
    .register(settingDocs, {
      section: 'Slack',
      description:
        'Slack\'s Messages tab: up to four prompts offered when someone opens it, as JSON `[{"title": "…", ' +
        '"message": "…"}]`',
      unset: 'what the bot can do',
    }),
  LOADING_MESSAGES: jsonList(z.string().trim().min(1).max(80), 10, '["Thinking…", "Reading the files…"]')
    .optional()
    .register(settingDocs, {
      section: 'Slack',
      description: 'Slack: up to ten short lines shown in turn while the bot works, as a JSON array of strings',
      unset: 'built in',
    }),
  DISABLED_TOOLS: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'built-in tools the model is not offered, comma-separated, e.g. `run_shell,fetch_url` (of `read_file`, ' +
        '`list_dir`, `search`, `write_file`, `edit_file`, `run_shell`, `fetch_url`)',
      unset: 'none',
    }),
};
