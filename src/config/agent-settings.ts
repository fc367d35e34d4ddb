// What the agent is given besides its built-in tools: MCP servers, its system prompt, and the
// profiles that set instructions, models and tools per place (src/profiles/).
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';

export const agentSettings = {
  MCP_CONFIG: z.string().min(1).default('./mcp.json').register(settingDocs, {
    section: 'Tools and shell',
    description: 'MCP servers in the common `mcpServers` format (see `mcp.example.json`); a missing file means none',
  }),
  SYSTEM_PROMPT: z.string().optional().register(settingDocs, {
    section: 'Instructions and profiles',
    description: 'replace the built-in system prompt',
    unset: 'built in',
  }),
  PROFILES: z
    .string()
    .trim()
    .min(1)
    .optional()
    .register(settingDocs, {
      section: 'Instructions and profiles',
      description:
        'a YAML or JSON file of profiles per place: instructions, models, tools, permission mode, approvers and ' +
        'more per Slack channel or workspace, Discord channel or server, DMs or the playground (see [Profiles per ' +
        'place](profiles.md)); reloaded on change and on `SIGHUP`',
      unset: 'none',
    }),
};
