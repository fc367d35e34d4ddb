// The bot core: everything between a chat platform and the engine that is not specific
// to a platform, assembled from the configuration. Connectors get a SessionManager and
// call deliver / interrupt / resolve; they render what its observer reports. Each part is
// built in src/core/ (policies, storage, tools, operations, files, profiles, sessions,
// schedules); this file puts them together in order and hands out what connectors need.
//
// Start-up order matters: the store opens, MCP servers connect (a failing one is reported,
// not fatal); then the caller attaches its connectors, runs `recover()` (sessions a crash
// left mid-turn are repaired: only those, found through the store's open index), and only
// then lets the connectors take events. Expired sessions are swept a minute after start and
// every six hours: the sweep reads every session record, which start-up must not wait for.
import type { Config } from './config.js';
import type { EngineLogger } from './engine/index.js';
import type { McpStartReport } from './mcp/index.js';
import { createProviderResolver, providerSettingsFrom } from './providers/index.js';
import { configSecretValues, SecretMasker } from './secrets/index.js';
import { accessWarnings } from './sessions/access-policy.js';
import { ObserverHub } from './sessions/observer-hub.js';
import type { FileTransfers } from './files/index.js';
import type { SessionManager } from './sessions/session-manager.js';
import type { SingletonLease } from './cluster/singleton-lease.js';
import type { SessionStore } from './store/session-store.js';
import type { FeedbackBook } from './feedback/feedback-book.js';
import type { ViewingContexts } from './context/viewing-contexts.js';
import type { ModelPrices } from './ops/pricing.js';
import type { SpendReader } from './ops/spend-report.js';
import type { OpsBus } from './ops/ops-events.js';
import type { MetricsEndpoint } from './ops/metrics/metrics-endpoint.js';
import type { Profiles } from './profiles/profiles.js';
import type { ScheduleDesk } from './schedules/schedule-types.js';
import { PersonZones } from './schedules/person-zones.js';
import type { ScheduleClock } from './schedules/scheduler.js';
import type { ProfileReloader } from './profiles/profile-setup.js';
import type { ProfileWatch } from './profiles/profile-watch.js';
import { filesFrom } from './core/files.js';
import { metricsFor, startOperations } from './core/operations.js';
import { namesModel, settlePolicies } from './core/policies.js';
import { loadProfiles } from './core/profiles.js';
import { startRetentionSweeps } from './core/retention.js';
import { schedulesFor } from './core/schedules.js';
import { startSessions } from './core/sessions.js';
import { coreShutdown } from './core/shutdown.js';
import { openStorage, singletonsOf } from './core/storage.js';
import { connectMcp, toolsFrom } from './core/tools.js';

export interface Core {
  manager: SessionManager;
  store: SessionStore;
  /** Connectors register what renders their platform's sessions here. */
  observers: ObserverHub;
  /** Connectors register how their platform's files are fetched and posted here (src/files/transfer.ts). */
  files: FileTransfers;
  /** What a person looks at while writing to the bot (Slack's Messages tab), given to the model as context (src/context/). */
  viewing: ViewingContexts;
  /** What model calls cost: the built-in table and MODEL_PRICES (src/ops/pricing.ts). */
  prices: ModelPrices;
  /**
   * The operations side's event stream (src/ops/ops-events.ts): turns, model and tool calls,
   * waits, stops, spend. Sinks (metrics, traces, the audit trail) listen; connectors emit
   * their platform API calls here.
   */
  ops: OpsBus;
  /** What was spent, by person, channel and workspace, for `/usage` (src/ops/spend/). */
  spend?: SpendReader;
  /** GET /metrics, answered by the HTTP servers (PORT or HEALTH_PORT); absent with METRICS=off (src/ops/metrics/). */
  metrics?: MetricsEndpoint;
  /** Masks the configured secrets in a text the bot shows or sends on (a session title made of a request). */
  mask: (text: string) => string;
  /** 👍 / 👎 on final answers: the presenters record answers, the connectors' clicks vote, /feedback totals (src/feedback/). */
  feedback: FeedbackBook;
  /**
   * Repair what a crash left. Call once every connector is attached and before any of them
   * starts taking events: nothing may touch a session before it is repaired.
   */
  recover(): ReturnType<SessionManager['recover']>;
  mcp: McpStartReport;
  /**
   * The first half of a shutdown for a restart (a deploy), once the connectors take no more
   * events: every turn in flight is left where a crash would leave it, and the next start
   * carries it on. The store is fenced (no write from now on: nothing is recorded as stopped,
   * a pending approval stays pending), the threads are muted, each working thread gets its
   * open answer closed and a note that it carries on after the restart, and the tools'
   * processes end. Resolves with how many turns were left to carry on. `close` follows.
   */
  suspend(): Promise<number>;
  /** A connector's own rendering documents under `prefix` stay writable after `suspend` (see store/write-fence.ts `keep`). */
  keepWritableAtShutdown(prefix: string): void;
  /** Scheduled work (src/schedules/): what `/schedule`, `/schedules`, `/unschedule` and the schedule_task tool ask. */
  schedules?: ScheduleDesk;
  /** Until the schedules' occurrences due now are handed to their runs (tests move a manual clock with it). */
  schedulesIdle(): Promise<void>;
  /** SCHEDULE_TZ: the time zone a schedule is read in when the platform does not give the person's. */
  scheduleTimezone: string;
  /** People's time zones per platform (a connector that knows them registers; else SCHEDULE_TZ): for the schedule_task tool. */
  personZones: PersonZones;
  /** Profiles per place (src/profiles/); `default` alone without PROFILES. */
  profiles: Profiles;
  /** Reads PROFILES again (a change on disk, SIGHUP); absent without PROFILES. */
  profileReloader?: ProfileReloader;
  /** Reads PROFILES again when it changes on disk; run-bot.ts asks it on SIGHUP too. Closed by `close`. */
  profileWatch?: ProfileWatch;
  /** Things worth a warning at start-up (a risky but legal setup, MCP servers that failed). */
  warnings: string[];
  /**
   * Cluster mode only: a lease one instance holds for the whole bot (`name`: e.g.
   * 'discord-gateway'), the others standing by (src/cluster/singleton-lease.ts). Absent when
   * this process is the only instance: it holds everything.
   */
  singleton?(name: string): SingletonLease;
  close(): Promise<void>;
}

export interface CoreOptions {
  logger: EngineLogger;
  /**
   * The masker the logger masks with (main.ts builds it from the settings); the core adds the
   * MCP servers' credentials to it. Without one the core makes its own: tool results are
   * masked either way.
   */
  secrets?: SecretMasker;
  /** The bwrap executable for the shell sandbox (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /** The clock the spend limits' days and months follow (default Date.now): tests cross midnight with it. */
  spendClock?: () => number;
  /** The clock and timers schedules run on (default: the system's): tests move time with it. */
  scheduleClock?: ScheduleClock;
}

export async function startCore(config: Config, options: CoreOptions): Promise<Core> {
  const { logger } = options;
  const secrets = (options.secrets ?? new SecretMasker()).add(configSecretValues(config));
  const mask = (text: string): string => secrets.mask(text);
  if (!namesModel(config)) throw new Error('MODEL is not set: name the model as provider:model, e.g. openai:gpt-4.1');
  // Before anything is opened: each of these stops the start with its reason.
  const policies = await settlePolicies(config, { bwrapPath: options.bwrapPath, logger });
  const resolveProvider = createProviderResolver(providerSettingsFrom(config));
  const storage = await openStorage(config, policies.shell, logger);
  const shell = storage.shell;
  const tools = toolsFrom(config, logger);
  const observers = new ObserverHub();
  const operations = await startOperations(config, {
    storage,
    observers,
    mask,
    knownTools: tools.knownTools,
    profiles: () => profiles.profiles,
    logger,
    spendClock: options.spendClock,
  });
  const files = filesFrom(config, shell, logger);
  const mcp = await connectMcp(config, tools.mcp, secrets);
  // Whose time zone is what (Slack's connector registers users.info `tz`): the schedule_task tool reads "when" in it.
  const personZones = new PersonZones(config.SCHEDULE_TZ, logger);
  const profiles = await loadProfiles(config, {
    policySettings: policies.policySettings,
    workspaceRoot: shell.workspaceRoot,
    mcpConfig: mcp.mcpConfig,
    logger,
  });
  // The schedules are made after the manager (their runs need it); engines read them once sessions are built.
  const sessions = startSessions(config, {
    storage,
    shell,
    policies,
    operations,
    tools,
    files,
    profiles,
    observers,
    secrets,
    personZones,
    resolveProvider,
    schedules: () => schedules.desk,
    logger,
  });
  const { manager } = sessions;
  const schedules = schedulesFor(config, {
    storage,
    manager,
    access: policies.access,
    observers,
    logger,
    clock: options.scheduleClock,
  });
  const metrics = await metricsFor(
    config,
    operations.ops,
    { sessions: () => manager.load(), modelCalls: () => sessions.modelGate.load },
    tools.knownTools,
  );

  const { spend } = operations;
  const setupWarnings = [
    ...accessWarnings(policies.access, policies.policy.mode !== 'read-only'),
    ...storage.opened.notes,
    ...(shell.warn ? [shell.message] : []),
    ...spend.warnings,
  ];
  for (const warning of setupWarnings) logger.warn({}, warning);
  // Listed, not logged again: the manager logged each MCP failure, with its reason, as it happened.
  const warnings = [
    ...setupWarnings,
    ...mcp.report.failures.map((failure) => `MCP server "${failure.server}" did not start: ${failure.error}`),
  ];

  const stopRetentionSweeps = startRetentionSweeps(config.RETENTION_DAYS, { manager, audit: operations.audit, logger });
  const shutdown = coreShutdown({
    storage,
    shell,
    manager,
    observers,
    schedules,
    mcp: tools.mcp,
    ops: operations.ops,
    profileWatch: profiles.watch,
    stopRetentionSweeps,
    logger,
  });
  const singleton = singletonsOf(storage, config, logger);
  return {
    manager,
    store: storage.store,
    observers,
    files: files.transfers,
    feedback: sessions.feedback,
    viewing: sessions.viewing,
    prices: operations.prices,
    spend: spend.ledger,
    ops: operations.ops,
    ...(metrics ? { metrics } : {}),
    mask,
    recover: async () => {
      // Sweeps and pokes start with events: a session taken over is drawn by attached connectors.
      await storage.cluster?.start();
      const report = await manager.recover();
      logger.info(report, 'recovered sessions after start-up');
      // Runs missed while the bot was down run now (within SCHEDULE_GRACE) or are noted as skipped.
      await schedules.start();
      return report;
    },
    mcp: mcp.report,
    schedules: schedules.desk,
    schedulesIdle: () => schedules.idle(),
    scheduleTimezone: config.SCHEDULE_TZ,
    personZones,
    profiles: profiles.profiles,
    ...(profiles.reloader ? { profileReloader: profiles.reloader } : {}),
    ...(profiles.watch ? { profileWatch: profiles.watch } : {}),
    warnings,
    keepWritableAtShutdown: (prefix) => storage.fence.keep(prefix),
    ...(singleton ? { singleton } : {}),
    suspend: () => shutdown.suspend(),
    close: () => shutdown.close(),
  };
}
