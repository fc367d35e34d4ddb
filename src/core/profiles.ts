// The profiles per place (src/profiles/) laid over the environment's settings, and the model
// menu they choose from. A broken PROFILES file stops the start, with every problem; a change
// on disk reloads them for new turns.
import type { EngineLogger } from '../engine/index.js';
import type { McpConfig } from '../mcp/index.js';
import { knownNames } from '../profiles/known-names.js';
import { profilesFrom, type ProfileReloader } from '../profiles/profile-setup.js';
import type { ProfileWatch } from '../profiles/profile-watch.js';
import type { Profiles } from '../profiles/profiles.js';
import { modelMenu } from '../providers/model-menu.js';
import { DEFAULT_SYSTEM_PROMPT } from '../system-prompt.js';
import type { CoreConfig, PolicySettings } from './policies.js';

export interface CoreProfiles {
  models: ReturnType<typeof modelMenu>;
  profiles: Profiles;
  /** Absent without PROFILES. */
  reloader: ProfileReloader | undefined;
  watch: ProfileWatch | undefined;
}

export async function loadProfiles(
  config: CoreConfig,
  deps: { policySettings: PolicySettings; workspaceRoot: string; mcpConfig: McpConfig; logger: EngineLogger },
): Promise<CoreProfiles> {
  const { policySettings, mcpConfig, logger } = deps;
  const models = modelMenu({
    models: config.MODELS,
    defaultModel: config.MODEL,
    compactionModel: config.COMPACTION_MODEL,
  });
  const { profiles, reloader } = await profilesFrom(config.PROFILES, {
    logger,
    env: {
      model: config.MODEL,
      models,
      menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
      systemPrompt: config.SYSTEM_PROMPT ?? DEFAULT_SYSTEM_PROMPT,
      permissionMode: policySettings.mode,
      shellAllowlist: policySettings.shellAllowList,
      workspaceScope: config.WORKSPACE_SCOPE,
    },
    known: knownNames({
      mcpServers: [
        ...mcpConfig.servers.map((server) => server.name),
        ...(mcpConfig.skipped ?? []).map((skipped) => skipped.server),
      ],
      policy: policySettings,
      workspaceRoot: deps.workspaceRoot,
      settings: config,
    }),
  });
  // src/profiles/profile-watch.ts; loaded only with PROFILES.
  const watch = reloader
    ? new (await import('../profiles/profile-watch.js')).ProfileWatch(reloader, { logger }).start()
    : undefined;
  return { models, profiles, reloader, watch };
}
