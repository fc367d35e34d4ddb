// `npm run doctor`'s PROFILES check: the file read and checked as a start reads it (the same
// schema, the same known names: src/profiles/known-names.ts), every problem on a ✗ line of
// its own with the file's name, so an operator fixes the file in one pass; a good file is one
// ✓ line listing each profile and the places it matches. Without PROFILES there is no line.
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { loadMcpConfig } from '../mcp/index.js';
import { knownNames } from '../profiles/known-names.js';
import { profileChecks } from '../profiles/profile-checks.js';
import { readProfilesFile } from '../profiles/profile-file.js';
import type { Profile } from '../profiles/profile-schema.js';
import type { CheckResult } from './preflight.js';

export async function checkProfiles(config: Config, env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
  if (!config.PROFILES) return [];
  const path = resolve(config.PROFILES);
  const name = 'PROFILES';
  // The MCP servers a profile may name; a broken MCP file is the MCP check's ✗, and here no server is known.
  const mcpServers = await loadMcpConfig(resolve(config.MCP_CONFIG), env, { unsetVariables: 'skip' }).then(
    (mcp) => [...mcp.servers.map((server) => server.name), ...(mcp.skipped ?? []).map((skipped) => skipped.server)],
    () => [],
  );
  const known = knownNames({
    mcpServers,
    policy: {
      mode: config.PERMISSION_MODE,
      shellAllowList: (config.SHELL_ALLOWLIST ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
      grantScope: config.GRANT_SCOPE,
    },
    workspaceRoot: resolve(config.WORKSPACE_DIR),
    settings: config,
  });
  const reading = await readProfilesFile(path, profileChecks(known));
  if (!reading.ok)
    return reading.problems.map((problem) => ({ name, status: 'fail' as const, detail: `${path}: ${problem}` }));
  if (reading.profiles.length === 0)
    return [
      { name, status: 'warn', detail: `${path} has no profiles: every place runs on the environment's settings` },
    ];
  const count = reading.profiles.length === 1 ? '1 profile' : `${reading.profiles.length} profiles`;
  return [
    {
      name,
      status: 'ok',
      detail: `${count} in ${path}: ${reading.profiles.map((profile) => `${profile.name} (${placesOf(profile)})`).join('; ')}`,
    },
  ];
}

/** What a profile matches, in words: `Slack channel C0OPS`, `DMs in Slack workspace T1`. */
function placesOf(profile: Profile): string {
  const { match } = profile;
  const listed = (one: string, many: string, ids: string[] | undefined): string | undefined =>
    ids ? `${ids.length === 1 ? one : many} ${ids.join(', ')}` : undefined;
  const words = [
    listed('Slack channel', 'Slack channels', match.slackChannel),
    listed('Discord channel', 'Discord channels', match.discordChannel),
    match.dm ? 'DMs' : undefined,
    match.playground ? 'the playground' : undefined,
    listed('Slack workspace', 'Slack workspaces', match.slackTeam),
    listed('Discord server', 'Discord servers', match.discordGuild),
  ].filter((word): word is string => word !== undefined);
  // Several keys must all hold: "DMs in Slack workspace T1".
  return words.join(' in ');
}
