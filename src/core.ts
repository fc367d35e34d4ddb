// The bot core: everything between a chat platform and the engine that is not specific
// to a platform, assembled from the configuration. Connectors get a SessionManager and
// call deliver / interrupt / resolve; they render what its observer reports.
//
// Start-up order matters: the store opens, MCP servers connect (a failing one is reported,
// not fatal); then the caller attaches its connectors, runs `recover()` (sessions a crash
// left mid-turn are repaired: only those, found through the store's open index), and only
// then lets the connectors take events. Expired sessions are swept a minute after start and
// every six hours: the sweep reads every session record, which start-up must not wait for.
import { resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { clustered, storeUrlOf, type Config } from './config.js';
import { disabledToolNames } from './config-checks.js';
import type { EngineLogger } from './engine/index.js';
import { loadMcpConfig, McpManager, type McpStartReport } from './mcp/index.js';
import { createPermissionPolicy } from './permissions/index.js';
import { createProviderResolver, providerSettingsFrom } from './providers/index.js';
import { configSecretValues, mcpSecretValues, SecretMasker } from './secrets/index.js';
import { AccessPolicy, accessWarnings, parseAccessConfig } from './sessions/access-policy.js';
import { InProcessCoordinator } from './sessions/coordination.js';
import { ObserverHub } from './sessions/observer-hub.js';
import { FileIntake, FileTransfers, mediaPreparers, removeThreadUploads } from './files/index.js';
import { conversationFolderName } from './tools/conversation-folder.js';
import { SessionManager } from './sessions/session-manager.js';
import { openKeyvStore } from './store/keyv-factory.js';
import { clusterKeys } from './cluster/cluster-keys.js';
import { redisIdSet } from './cluster/redis-id-set.js';
import { SingletonLease } from './cluster/singleton-lease.js';
import { fenceWrites } from './store/write-fence.js';
import { PersistentInbox } from './store/persistent-inbox.js';
import { sessionIdOf, SessionStore, type SessionRecord } from './store/session-store.js';
import { KeyvIdSet } from './store/keyv-id-set.js';
import { FeedbackBook } from './feedback/feedback-book.js';
import { ViewingContexts } from './context/viewing-contexts.js';
import { ModelPrices } from './ops/pricing.js';
import type { SpendReader } from './ops/spend-report.js';
import { OpsBus } from './ops/ops-events.js';
import { OpsObserver } from './ops/ops-observer.js';
import { AuditTrail } from './ops/audit/audit-trail.js';
import { AUDIT_KEY_PREFIX, auditStore } from './ops/audit/audit-store.js';
import { sessionOps } from './ops/session-ops.js';
import type { SpendGuard } from './ops/metered-provider.js';
import { spendFrom } from './ops/spend/spend-setup.js';
import { tracingFrom } from './ops/traces/index.js';
import type { MetricsEndpoint } from './ops/metrics/metrics-endpoint.js';
import { DEFAULT_SYSTEM_PROMPT } from './system-prompt.js';
import { sessionEngines } from './session-engines.js';
import { profilesFrom } from './profiles/profile-setup.js';
import type { Profiles } from './profiles/profiles.js';
import type { ScheduleDesk } from './schedules/schedule-types.js';
import { PersonZones } from './schedules/person-zones.js';
import { schedulesFrom } from './schedules/schedule-setup.js';
import type { ScheduleClock } from './schedules/scheduler.js';
import type { ProfileReloader } from './profiles/profile-setup.js';
import type { ProfileWatch } from './profiles/profile-watch.js';
import { botToolNames, knownNames } from './profiles/known-names.js';
import { ModelCallGate } from './providers/model-gate.js';
import { modelMenu } from './providers/model-menu.js';
import { runAsWriterFor } from './sandbox/run-as-writer.js';
import { prepareShell, recheckShell } from './sandbox/shell-startup.js';
import { parseGrantRoots, removeThreadFolder } from './tools/index.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_SWEEP_EVERY_MS = 6 * 60 * 60 * 1000;
const RETENTION_FIRST_SWEEP_MS = 60 * 1000;

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
  if (!config.MODEL) throw new Error('MODEL is not set: name the model as provider:model, e.g. openai:gpt-4.1');
  // Fails closed: a malformed ALLOWED_USERS or ADMINS stops the start, with the reason.
  const access = new AccessPolicy(parseAccessConfig(config.ALLOWED_USERS, config.ADMINS));
  // Before anything is opened: a workspace that holds the bot's own files, a bad SHELL_ENV,
  // or SHELL_SANDBOX=bwrap where bwrap cannot run stops the start with the reason.
  let shell = await prepareShell(config, { bwrapPath: options.bwrapPath, logger });
  const policyOptions = {
    mode: config.PERMISSION_MODE,
    shellAllowList: (config.SHELL_ALLOWLIST ?? '').split(',').map((entry) => entry.trim()).filter(Boolean),
    grantScope: config.GRANT_SCOPE,
  };
  // Checks the allow-list's entries at start; each session has its own, for its own folder.
  const policy = createPermissionPolicy({ ...policyOptions, workspaceDir: shell.workspaceRoot });
  // A GRANT_ROOTS entry that is not an existing project folder stops the start, with the reason.
  const grantRoots = parseGrantRoots(config.GRANT_ROOTS);
  const resolveProvider = createProviderResolver(providerSettingsFrom(config));

  // The store's folder is made private, but never one on the way to what commands must reach.
  const opened = await openKeyvStore(storeUrlOf(config), 'bot', { keepReachable: shell.reachable });
  try {
    // Probed again if that changed a folder: the probe must have seen what commands will find.
    shell = await recheckShell(config, shell, { changedFolders: opened.changedFolders ?? [] });
  } catch (error) {
    await opened.close();
    throw error;
  }
  if (!shell.warn) logger.info({}, shell.message); // a warning is logged below, with the others
  // Closed by `suspend`: from then on the store holds what a crash would have left.
  const fence = fenceWrites(opened.keyv);
  // Cluster mode (a Redis store): sessions are owned by lease across instances (src/cluster).
  const shared = clustered(config) && opened.redis ? opened.redis : undefined;
  const keys = clusterKeys();
  const store = shared ? new SessionStore(opened.keyv, redisIdSet(shared, keys.openSessions), redisIdSet(shared, keys.allSessions)) : new SessionStore(opened.keyv);
  const viewing = new ViewingContexts(opened.keyv);
  const feedback = new FeedbackBook(store, shared ? redisIdSet(shared, keys.feedbackVotes) : new KeyvIdSet(opened.keyv, 'feedback-votes', async () => []), {
    mask: (text) => secrets.mask(text),
    // Called at a click, when the manager (made below) exists.
    turnsWoundDown: () => manager.afterTurnsWindDown(),
  });
  // Imported only in cluster mode: it brings ioredis, which a bot on SQLite does not need.
  const cluster = shared ? await (await import('./cluster/cluster-setup.js')).clusterCoordinator(shared, config, logger) : undefined;
  const inbox = new PersistentInbox(store, cluster ? { claim: (itemId) => cluster.resolveOnce(itemId), release: (itemId) => cluster.unresolve(itemId) } : undefined);
  const mcp = new McpManager({ logger });
  const observers = new ObserverHub();
  const ops = new OpsBus(logger);
  const opsObserver = new OpsObserver(ops, { mask: (text) => secrets.mask(text) });
  observers.addEverywhere(opsObserver);
  // Metrics and traces name a tool only if it is registered (the bot's own, an MCP server's): the model chooses the name.
  const botTools = botToolNames();
  const knownTools = (name: string): boolean => botTools.has(name) || mcp.hasTool(name);
  // Traces over OTLP when an endpoint is set; OpenTelemetry is not even loaded otherwise.
  const traces = await tracingFrom(config, { mask: (text) => secrets.mask(text), logger, knownTools });
  if (traces) ops.add(traces);
  // The audit trail (src/ops/audit/): written at shutdown too, past the write fence (what it records happened).
  const audit = new AuditTrail(auditStore(opened.keyv, shared ? { redis: shared, keys } : undefined), { retentionDays: config.AUDIT_RETENTION_DAYS, logger, mask: (text) => secrets.mask(text) });
  ops.add(audit);
  fence.keep(AUDIT_KEY_PREFIX);
  const prices = new ModelPrices(config.MODEL_PRICES ?? {});
  // Every settled model call is recorded; BUDGET_* limits hold before each call (src/ops/spend/).
  const spend = spendFrom(config, {
    keyv: opened.keyv,
    ...(shared ? { redis: shared } : {}),
    prices,
    ops,
    logger,
    ...(options.spendClock ? { now: options.spendClock } : {}),
    // A profile's budgets replace BUDGET_* in its place (read at each call: a reload holds at once).
    budgetsAt: (place) => profiles.settingsAt(place).budgets,
    notify: async (place, text) => {
      const record = await store.getSession(place.sessionId);
      if (record) await observers.onNotice(record, { kind: 'budget_warning', text });
    },
  });
  ops.add(spend.guard);
  const guard: SpendGuard | undefined = spend.guard;
  const files = new FileTransfers();
  // Cluster mode: the slots are the whole bot's, in Redis (src/cluster/redis-model-slots.ts).
  const modelGate = new ModelCallGate(config.MAX_CONCURRENT_MODEL_CALLS, cluster?.modelSlots(config.MAX_CONCURRENT_MODEL_CALLS));
  const reportWaiting = async (session: SessionRecord, ahead: number | null): Promise<void> => {
    try {
      await observers.onWaiting(session, ahead);
    } catch (error) {
      logger.warn({ err: error }, 'could not show that a model call waits');
    }
  };
  // A server whose `${VAR}` is unset is skipped with a warning; a malformed file stops the start.
  const mcpConfig = await loadMcpConfig(resolve(config.MCP_CONFIG), process.env, { unsetVariables: 'skip' });
  // Known before the servers start: their stderr is logged, and may quote their tokens.
  secrets.add(mcpSecretValues(mcpConfig));
  const mcpReport = await mcp.start(mcpConfig);
  const models = modelMenu({ models: config.MODELS, defaultModel: config.MODEL, compactionModel: config.COMPACTION_MODEL });
  // A broken PROFILES file stops the start, with every problem (src/profiles/).
  // Whose time zone is what (Slack's connector registers users.info `tz`): the schedule_task tool reads "when" in it.
  const personZones = new PersonZones(config.SCHEDULE_TZ, logger);
  const { profiles, reloader: profileReloader } = await profilesFrom(config.PROFILES, {
    logger,
    env: {
      model: config.MODEL,
      models,
      menuOf: (names, defaultModel) => modelMenu({ models: names.join(','), defaultModel }),
      systemPrompt: config.SYSTEM_PROMPT ?? DEFAULT_SYSTEM_PROMPT,
      permissionMode: policyOptions.mode,
      shellAllowlist: policyOptions.shellAllowList,
      workspaceScope: config.WORKSPACE_SCOPE,
    },
    known: knownNames({
      mcpServers: [...mcpConfig.servers.map((server) => server.name), ...(mcpConfig.skipped ?? []).map((skipped) => skipped.server)],
      policy: policyOptions,
      workspaceRoot: shell.workspaceRoot,
      settings: config,
    }),
  });
  // A change on disk reloads the profiles for new turns (src/profiles/profile-watch.ts).
  const profileWatch = profileReloader ? new (await import('./profiles/profile-watch.js')).ProfileWatch(profileReloader, { logger }).start() : undefined;
  const baseWorkspaceDir = resolve(config.WORKSPACE_DIR);
  // DISABLED_TOOLS: never offered to the model (loadConfig refused unknown names).
  const disabledTools = new Set(disabledToolNames(config.DISABLED_TOOLS));

  const runAs = shell.shell.kind === 'sandbox' ? shell.shell.sandbox.runAs : undefined;
  // Files people share are fetched when a turn takes their message, by each platform's source.
  const intake = new FileIntake({
    transfers: files,
    maxFileBytes: config.MAX_FILE_BYTES,
    maxFilesPerMessage: config.MAX_FILES_PER_MESSAGE,
    maxConversationBytes: config.MAX_CONVERSATION_FILE_BYTES,
    // A root bot's uploads are made and written as its commands' user (src/sandbox/run-as-writer.ts).
    ...(runAs ? { writer: runAsWriterFor(runAs) } : {}),
    media: mediaPreparers({ maxImagePixels: config.MAX_IMAGE_PIXELS, pdfMaxMemoryMb: config.PDF_MAX_MEMORY_MB }),
    logger,
  });

  const manager = new SessionManager({
    store,
    inbox,
    coordinator: cluster ?? new InProcessCoordinator(store),
    access,
    defaultModel: config.MODEL,
    logger,
    grantScope: config.GRANT_SCOPE,
    models,
    profiles,
    fairUse: {
      maxQueuedInputs: config.MAX_QUEUED_INPUTS,
      maxQueuedBytes: config.MAX_QUEUED_BYTES,
      turnsPerUserPerMinute: config.TURNS_PER_USER_PER_MINUTE,
      threadsPerUser: config.THREADS_PER_USER,
    },
    maxLiveSessions: config.MAX_LIVE_SESSIONS,
    fileCaps: { maxFileBytes: config.MAX_FILE_BYTES, maxFilesPerMessage: config.MAX_FILES_PER_MESSAGE },
    observer: observers,
    ops: sessionOps(ops, opsObserver),
    budget: spend.guard,
    // A forgotten or expired thread's own folder goes with it (never a channel's, never WORKSPACE_DIR).
    removeThreadFiles: async (key) => {
      await feedback.forgetSession(sessionIdOf(key));
      await viewing.forget(key);
      // Wherever a profile put the thread's folder: the environment's, and each profile's.
      for (const { workspaceDir, scope } of profiles.folders(baseWorkspaceDir)) {
        // A thread's folder on a disk of its own (WORKSPACE_DISKS): the disk goes first, then the empty folder.
        await shell.disks?.forget(resolve(workspaceDir, conversationFolderName('thread', key)));
        await removeThreadFolder(workspaceDir, key);
        // In a shared folder, the thread's uploads have a folder of their own (src/files/conversation-files.ts).
        if (scope === 'shared') await removeThreadUploads(workspaceDir, scope, key);
        else if (scope === 'channel') {
          const channelFolder = resolve(workspaceDir, conversationFolderName('channel', key));
          // From the channel's disk, mounted for it if no session holds it now.
          const remove = () => removeThreadUploads(channelFolder, scope, key);
          await (shell.disks ? shell.disks.visit(channelFolder, remove) : remove());
        }
      }
    },
    // What each session's engine is built with, under its profile (src/session-engines.ts).
    engineSetup: sessionEngines({
      config,
      profiles,
      baseWorkspaceDir,
      shell,
      grantRoots,
      resolveProvider,
      ops,
      ...(guard ? { guard } : {}),
      captureContent: traces !== undefined && config.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
      modelGate,
      reportWaiting,
      disabledTools,
      files,
      secrets,
      mcp,
      // Made after the manager (its runs need it); engines are built only once sessions are.
      schedules: () => schedules.desk,
      personZones,
      intake,
      policy,
      policyOptions,
      viewing,
      logger,
    }),
  });

  // Scheduled work (src/schedules/): made here, at start-up and outside any turn (its timers
  // keep the context they were made in); started by recover, once the connectors are attached.
  const schedules = schedulesFrom(config, {
    keyv: opened.keyv,
    ...(shared ? { redis: { client: shared, indexKey: keys.schedules } } : {}),
    manager,
    access,
    claim: (occurrenceId) => manager.claimEvent(occurrenceId),
    notify: (record, notice) => observers.onNotice(record, notice),
    logger,
    ...(options.scheduleClock ? { clock: options.scheduleClock } : {}),
  });

  // Metrics: a sink on the operations bus, its gauges read from the sessions and the model-call gate.
  // With METRICS=off the metrics room (prom-client with it) is not even loaded.
  const metrics = config.METRICS ? (await import('./ops/metrics/index.js')).metricsOn(config, ops, { sessions: () => manager.load(), modelCalls: () => modelGate.load }, knownTools) : undefined;
  const setupWarnings = [...accessWarnings(access, policy.mode !== 'read-only'), ...opened.notes, ...(shell.warn ? [shell.message] : []), ...spend.warnings];
  for (const warning of setupWarnings) logger.warn({}, warning);
  // Listed, not logged again: the manager logged each MCP failure, with its reason, as it happened.
  const warnings = [...setupWarnings, ...mcpReport.failures.map((failure) => `MCP server "${failure.server}" did not start: ${failure.error}`)];

  const sweep = async () => {
    try {
      const deleted = await manager.sweepExpired(config.RETENTION_DAYS * DAY_MS);
      if (deleted.length > 0) logger.info({ sessions: deleted.length }, 'deleted sessions past the retention period');
    } catch (error) {
      logger.error({ err: error }, 'retention sweep failed');
    }
    await audit.sweep();
  };
  const firstSweep = setTimeout(() => void sweep(), RETENTION_FIRST_SWEEP_MS);
  firstSweep.unref();
  const sweeper = setInterval(() => void sweep(), RETENTION_SWEEP_EVERY_MS);
  sweeper.unref();

  let closed = false;
  let suspended = false;
  return {
    manager,
    store,
    observers,
    files,
    feedback,
    viewing,
    prices,
    spend: spend.ledger,
    ops,
    ...(metrics ? { metrics } : {}),
    mask: (text) => secrets.mask(text),
    recover: async () => {
      // Sweeps and pokes start with events: a session taken over is drawn by attached connectors.
      await cluster?.start();
      const report = await manager.recover();
      logger.info(report, 'recovered sessions after start-up');
      // Runs missed while the bot was down run now (within SCHEDULE_GRACE) or are noted as skipped.
      await schedules.start();
      return report;
    },
    mcp: mcpReport,
    schedules: schedules.desk,
    schedulesIdle: () => schedules.idle(),
    scheduleTimezone: config.SCHEDULE_TZ,
    personZones,
    profiles,
    ...(profileReloader ? { profileReloader } : {}),
    ...(profileWatch ? { profileWatch } : {}),
    warnings,
    keepWritableAtShutdown: (prefix) => fence.keep(prefix),
    ...(cluster && opened.redis ? { singleton: singletonOn(opened.redis, cluster.nodeId, config.CLUSTER_LEASE_MS, logger) } : {}),
    suspend: async () => {
      if (suspended || closed) return 0;
      suspended = true;
      await schedules.close();
      const working = await manager.beginSuspend();
      observers.mute();
      fence.close('the bot is shutting down');
      // Cluster mode: another instance takes these sessions at its next sweep, not a lease later.
      await cluster?.handOver();
      for (const { record, waitingForAnswer } of working) {
        try {
          await observers.onSuspend(record, waitingForAnswer);
        } catch (error) {
          logger.warn({ err: error, sessionId: record.id }, 'could not say in the thread that the bot restarts');
        }
      }
      await manager.releaseTools();
      return working.length;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await profileWatch?.stop();
      clearTimeout(firstSweep);
      clearInterval(sweeper);
      // After a suspend the turns are left as they are (the store is fenced); else they stop.
      await schedules.close();
      if (!suspended) await manager.shutdown();
      await mcp.close();
      await ops.close();
      await cluster?.close();
      await opened.close();
      // The sessions' commands have ended: the bot's memory cgroup folder is empty now, and
      // the workspace disks it still holds are unmounted (the next start mounts them again).
      if (shell.shell.kind === 'sandbox') shell.shell.sandbox.cgroups?.close();
      await shell.disks?.close();
    },
  };
}

/** Singleton leases on the cluster's Redis, under this instance's node id (same keys as the coordinator's). */
function singletonOn(redis: Redis, nodeId: string, leaseMs: number, logger: EngineLogger): (name: string) => SingletonLease {
  const keys = clusterKeys();
  return (name) => new SingletonLease({ redis, key: keys.singleton(name), nodeId, leaseMs, logger });
}
