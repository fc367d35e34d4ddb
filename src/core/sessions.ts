// The session layer (src/sessions/): the manager every connector delivers to, built over the
// store, the profiles and the operations side, with what each session's engine is made of
// (engines.ts). The feedback book and the viewing contexts live beside it: a
// forgotten thread takes its votes and its context with it.
import { resolve } from 'node:path';
import { ViewingContexts } from '../context/viewing-contexts.js';
import { FeedbackBook } from '../feedback/feedback-book.js';
import { sessionOps } from '../ops/session-ops.js';
import { ModelCallGate } from '../providers/model-gate.js';
import { InProcessCoordinator } from '../sessions/coordination.js';
import { SessionManager } from '../sessions/session-manager.js';
import { KeyvIdSet } from '../store/keyv-id-set.js';
import { redisIdSet } from '../cluster/redis-id-set.js';
import { engineSetupFor, type EngineSetupParts } from './engines.js';
import type { CoreConfig } from './policies.js';
import type { CoreStorage } from './storage.js';
import { threadRemover } from './thread-removal.js';

export interface CoreSessions {
  manager: SessionManager;
  feedback: FeedbackBook;
  viewing: ViewingContexts;
  /** MAX_CONCURRENT_MODEL_CALLS, held across the whole bot (in Redis in cluster mode). */
  modelGate: ModelCallGate;
}

/** Everything the session layer is built from: the engines' parts and the storage under both. */
export interface SessionParts extends EngineSetupParts {
  storage: CoreStorage;
}

export function startSessions(config: CoreConfig, parts: SessionParts): CoreSessions {
  const { storage, shell, policies, operations, observers, secrets, logger } = parts;
  const { store, shared, keys, opened, cluster } = storage;
  const { profiles, models } = parts.profiles;
  const viewing = new ViewingContexts(opened.keyv);
  const feedback = new FeedbackBook(
    store,
    shared ? redisIdSet(shared, keys.feedbackVotes) : new KeyvIdSet(opened.keyv, 'feedback-votes', async () => []),
    {
      mask: (text) => secrets.mask(text),
      // Called at a click, when the manager exists.
      turnsWoundDown: () => manager.afterTurnsWindDown(),
    },
  );
  // Cluster mode: the slots are the whole bot's, in Redis (src/cluster/redis-model-slots.ts).
  const modelGate = new ModelCallGate(
    config.MAX_CONCURRENT_MODEL_CALLS,
    cluster?.modelSlots(config.MAX_CONCURRENT_MODEL_CALLS),
  );
  const baseWorkspaceDir = resolve(config.WORKSPACE_DIR);
  const manager: SessionManager = new SessionManager({
    store,
    inbox: storage.inbox,
    coordinator: cluster ?? new InProcessCoordinator(store),
    access: policies.access,
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
    ops: sessionOps(operations.ops, operations.opsObserver),
    budget: operations.spend.guard,
    removeThreadFiles: threadRemover({ feedback, viewing, profiles, baseWorkspaceDir, shell }),
    engineSetup: engineSetupFor(config, parts, { modelGate, viewing, baseWorkspaceDir }),
  });
  return { manager, feedback, viewing, modelGate };
}
