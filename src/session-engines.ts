// What each session's engine is built with: its profile laid over the environment
// (src/profiles/), its own folder and shell, the tools it is offered, its permission policy,
// and every model call metered and gated. One factory, called by the session layer each time
// it builds a session (a new thread, a rebuild after eviction or a profiles reload).
import type { Config } from './config.js';
import type { EngineLogger, ProviderResolver } from './engine/index.js';
import type { EngineSetupFactory } from './sessions/live-session.js';
import {
  attachFileTool,
  attachmentViewFor,
  inputPreparer,
  uploadPlace,
  type FileIntake,
  type FileTransfers,
} from './files/index.js';
import type { McpManager } from './mcp/index.js';
import { placeOf, type OpsBus } from './ops/ops-events.js';
import { meteredResolver, type SpendGuard } from './ops/metered-provider.js';
import {
  createPermissionPolicy,
  type ConfiguredPermissionPolicy,
  type PermissionPolicyOptions,
} from './permissions/index.js';
import { profileFolder } from './profiles/profile-setup.js';
import { offers, type Profiles } from './profiles/profiles.js';
import { compactorFrom } from './providers/index.js';
import { gatedResolver, type ModelCallGate } from './providers/model-gate.js';
import type { ShellStartup } from './sandbox/shell-startup.js';
import type { ViewingContexts } from './context/viewing-contexts.js';
import type { PersonZones } from './schedules/person-zones.js';
import { scheduleTaskTool } from './schedules/schedule-tool.js';
import type { ScheduleDesk } from './schedules/schedule-types.js';
import type { SecretMasker } from './secrets/index.js';
import type { SessionRecord } from './store/session-store.js';
import { createBuiltinTools, openConversationFolder, type parseGrantRoots } from './tools/index.js';

export interface SessionEngineDeps {
  config: Config;
  profiles: Profiles;
  /** WORKSPACE_DIR, resolved. */
  baseWorkspaceDir: string;
  shell: ShellStartup;
  grantRoots: ReturnType<typeof parseGrantRoots>;
  resolveProvider: ProviderResolver;
  ops: OpsBus;
  guard?: SpendGuard;
  /** OTel content capture is on (traces exported and OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
  captureContent: boolean;
  modelGate: ModelCallGate;
  reportWaiting: (session: SessionRecord, ahead: number | null) => Promise<void>;
  /** DISABLED_TOOLS. */
  disabledTools: ReadonlySet<string>;
  files: FileTransfers;
  secrets: SecretMasker;
  mcp: McpManager;
  /** Read when a session is built (the desk is made after the session layer). */
  schedules: () => ScheduleDesk;
  personZones: PersonZones;
  intake: FileIntake;
  /** The environment's own policy (a shared folder under the default profile uses it as is). */
  policy: ConfiguredPermissionPolicy;
  policyOptions: PermissionPolicyOptions;
  viewing: ViewingContexts;
  logger: EngineLogger;
}

export function sessionEngines(deps: SessionEngineDeps): EngineSetupFactory {
  const { config, profiles, shell, files, secrets, mcp, disabledTools } = deps;
  const runAs = shell.shell.kind === 'sandbox' ? shell.shell.sandbox.runAs : undefined;
  return async (session) => {
    // The thread's profile, laid over the environment (src/profiles/): its prompt, tools, mode, folder.
    const profile = profiles.settingsOf(session.profile);
    const scope = profile.workspaceScope;
    const workspaceDir = profileFolder(deps.baseWorkspaceDir, profile.workspaceFolder);
    // One set of built-in tools per session: the shell's working directory is the session's,
    // in the conversation's own folder (WORKSPACE_SCOPE).
    const folder = openConversationFolder(workspaceDir, scope, session.key, runAs);
    // A thread's or channel's folder on a disk of its own (WORKSPACE_DISKS) is mounted before
    // anything reads or writes it; a shared folder holds other folders, and keeps a measured cap.
    const disk = scope !== 'shared' && shell.disks ? await shell.disks.hold(folder) : undefined;
    const builtin = createBuiltinTools({
      workspaceDir: folder,
      workspaceBase: scope === 'shared' ? undefined : workspaceDir,
      grantRoots: deps.grantRoots,
      shellTimeoutMs: config.SHELL_TIMEOUT_MS,
      fetchAllowPrivate: config.FETCH_ALLOW_PRIVATE,
      shell: shell.shell,
      shellEnvNames: shell.envNames,
      protectedPaths: shell.paths.protected
        .filter((entry) => entry.path !== shell.paths.home)
        .map((entry) => entry.path),
      homeDir: shell.paths.home,
      workspaceMaxBytes: config.WORKSPACE_MAX_MB * 1024 * 1024,
      ...(disk ? { workspaceDisk: disk } : {}),
    });
    // Every model call of the session, compaction included, is admitted by the spend limits
    // and reported to the operations side (src/ops/metered-provider.ts).
    const metered = meteredResolver(deps.resolveProvider, {
      place: placeOf(session),
      ops: deps.ops,
      ...(deps.guard ? { guard: deps.guard } : {}),
      fallbackRequester: () => session.startedBy,
      captureContent: deps.captureContent,
    });
    return {
      // Every model call takes a slot of the bot-wide gate (before the spend check); a wait shows in the thread.
      provider: gatedResolver(metered, deps.modelGate, {
        waiting: (ahead) => deps.reportWaiting(session, ahead),
        admitted: () => deps.reportWaiting(session, null),
      }),
      tools: [
        ...builtin.tools.filter((tool) => !disabledTools.has(tool.name)),
        ...(disabledTools.has('attach_file')
          ? []
          : [
              attachFileTool({
                workspace: builtin.workspace,
                thread: session.key,
                transfers: files,
                mask: secrets.mask,
                maxBytes: config.MAX_FILE_BYTES,
                compressed: config.ATTACH_COMPRESSED,
              }),
            ]),
        ...mcp.tools(),
        ...(disabledTools.has('schedule_task')
          ? []
          : [
              scheduleTaskTool({
                desk: deps.schedules(),
                key: session.key,
                timezone: (creator) => deps.personZones.zoneOf(session.key.platform, creator),
              }),
            ]),
      ].filter((tool) => offers(profile.tools, tool.name)),
      ...(profile.tools ? { offeredTools: profile.tools } : {}),
      prepareInput: inputPreparer(deps.intake, uploadPlace(folder, scope, session.key)),
      attachmentView: attachmentViewFor(folder),
      // Absolute paths inside the conversation's folder may follow a ` *` entry; anything else asks.
      policy:
        scope === 'shared' && profile.name === 'default'
          ? deps.policy
          : createPermissionPolicy({
              ...deps.policyOptions,
              mode: profile.permissionMode,
              shellAllowList: [...profile.shellAllowlist],
              workspaceDir: folder,
            }),
      compactor: compactorFrom(config, metered),
      instructions: profile.instructions,
      maxIterations: config.MAX_ITERATIONS,
      maxToolCallsPerResponse: config.MAX_TOOL_CALLS_PER_RESPONSE,
      interruptHooks: [builtin.interruptHook],
      // Where the person is looking (Slack's Messages tab): a fact for the model, never that channel's content.
      contextProvider: () => deps.viewing.describe(session.key),
      logger: deps.logger,
      maskOutput: secrets.mask,
      maskStream: secrets.streamMask,
      // The shell's commands end first: then no process of this session is in the disk.
      dispose: async () => {
        await builtin.dispose();
        await disk?.release();
      },
      grantDirectory: (dir) => builtin.workspace.grant(dir),
      grantRefusal: (dir) => builtin.workspace.grantRefusal(dir),
      grantPreview: (dir) => builtin.workspace.grantPreview(dir),
    };
  };
}
