// The thread presenters the Discord connector holds in memory, each drawing on its thread's
// Discord surface. A presenter is built on demand, for an event of its session or a click in
// its thread; memory stays bounded because at most MAX_LIVE_SESSIONS are kept: the least
// recently used whose thread is not working are dropped (a later turn builds a fresh one; the
// store finds earlier cards).
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { CallText } from '../shared/call-arguments.js';
import { ThreadPresenter } from '../shared/thread-presenter.js';
import { DiscordSurface } from './discord-surface.js';
import type { DiscordOutbound } from './outbound.js';

export interface LiveThreadsDeps {
  config: Pick<Config, 'MAX_LIVE_SESSIONS' | 'GRANT_SCOPE' | 'TOOL_DISPLAY'>;
  core: Pick<Core, 'manager' | 'feedback' | 'mask' | 'prices'>;
  logger: EngineLogger;
  outbound: DiscordOutbound;
  /** Between two edits of a streamed answer (tests shorten it). */
  answerIntervalMs?: number;
}

interface LiveThread {
  presenter: ThreadPresenter;
  surface: DiscordSurface;
}

export class LiveThreads {
  /** By session id, least recently used first (a Map keeps its insertion order). */
  private readonly threads = new Map<string, LiveThread>();

  constructor(private readonly deps: LiveThreadsDeps) {}

  /** How many presenters are held now. */
  get size(): number {
    return this.threads.size;
  }

  /** The thread's presenter, built with its Discord surface when it is not held. */
  presenterFor(session: SessionRecord): ThreadPresenter {
    const known = this.threads.get(session.id);
    if (known) {
      this.threads.delete(session.id);
      this.threads.set(session.id, known);
      return known.presenter;
    }
    const { config, core, logger } = this.deps;
    const surface = new DiscordSurface(
      {
        outbound: this.deps.outbound,
        records: core.manager.records,
        logger,
        ...(this.deps.answerIntervalMs !== undefined ? { answerIntervalMs: this.deps.answerIntervalMs } : {}),
      },
      session,
    );
    const presenter = new ThreadPresenter(
      {
        surface,
        records: core.manager.records,
        logger,
        grantScope: config.GRANT_SCOPE,
        toolDisplay: config.TOOL_DISPLAY,
        feedback: core.feedback,
        mask: (text) => core.mask(text),
        prices: core.prices,
      },
      session,
    );
    this.threads.set(session.id, { presenter, surface });
    if (this.threads.size > config.MAX_LIVE_SESSIONS) {
      for (const [id, live] of this.threads) {
        if (this.threads.size <= config.MAX_LIVE_SESSIONS) break;
        if (id === session.id || core.manager.isWorking(id)) continue;
        live.surface.dispose();
        this.threads.delete(id);
      }
    }
    return presenter;
  }

  /** The full text a held presenter has for a card's call, if the thread is held (Show all). */
  cardText(sessionId: string, toolCallId: string): CallText | undefined {
    return this.threads.get(sessionId)?.presenter.fullTextOf(toolCallId);
  }

  /** Stop every surface's timers (the connector's close). */
  disposeAll(): void {
    for (const live of this.threads.values()) live.surface.dispose();
  }
}
