// What each session's engine is built with (src/session-engines.ts), from the core's parts:
// its tools and shell, its permission policy, and every model call metered, gated and traced.
import type { ViewingContexts } from '../context/viewing-contexts.js';
import type { ModelCallGate } from '../providers/model-gate.js';
import { sessionEngines } from '../session-engines.js';
import type { EngineSetupFactory } from '../sessions/live-session.js';
import type { EngineLogger, ProviderResolver } from '../engine/index.js';
import type { ScheduleDesk } from '../schedules/schedule-types.js';
import type { PersonZones } from '../schedules/person-zones.js';
import type { SecretMasker } from '../secrets/index.js';
import type { ObserverHub } from '../sessions/observer-hub.js';
import type { ShellStartup } from '../sandbox/shell-startup.js';
import type { CoreFiles } from './files.js';
import type { CoreOperations } from './operations.js';
import type { CoreConfig, CorePolicies } from './policies.js';
import type { CoreProfiles } from './profiles.js';
import type { CoreTools } from './tools.js';

/** What each session's engine is built from (the session layer adds its storage). */
export interface EngineSetupParts {
  /** The shell as storage.ts rechecked it. */
  shell: ShellStartup;
  policies: Pick<CorePolicies, 'access' | 'policy' | 'policySettings' | 'grantRoots'>;
  operations: CoreOperations;
  tools: CoreTools;
  files: CoreFiles;
  profiles: CoreProfiles;
  observers: ObserverHub;
  secrets: SecretMasker;
  personZones: PersonZones;
  resolveProvider: ProviderResolver;
  /** Made after the manager (its runs need it); engines are built only once sessions are. */
  schedules: () => ScheduleDesk;
  logger: EngineLogger;
}

export function engineSetupFor(
  config: CoreConfig,
  parts: EngineSetupParts,
  made: { modelGate: ModelCallGate; viewing: ViewingContexts; baseWorkspaceDir: string },
): EngineSetupFactory {
  const { operations, tools, files, policies, observers, logger } = parts;
  return sessionEngines({
    config,
    profiles: parts.profiles.profiles,
    baseWorkspaceDir: made.baseWorkspaceDir,
    shell: parts.shell,
    grantRoots: policies.grantRoots,
    resolveProvider: parts.resolveProvider,
    ops: operations.ops,
    guard: operations.spend.guard,
    captureContent: operations.traced && config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    modelGate: made.modelGate,
    reportWaiting: async (session, ahead) => {
      try {
        await observers.onWaiting(session, ahead);
      } catch (error) {
        logger.warn({ err: error }, 'could not show that a model call waits');
      }
    },
    disabledTools: tools.disabledTools,
    files: files.transfers,
    secrets: parts.secrets,
    mcp: tools.mcp,
    schedules: parts.schedules,
    personZones: parts.personZones,
    intake: files.intake,
    policy: policies.policy,
    policyOptions: policies.policySettings,
    viewing: made.viewing,
    logger,
  });
}
