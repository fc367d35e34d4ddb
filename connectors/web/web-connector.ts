// The playground connector: a local web page that plays a chat channel, the third surface on
// the shared thread presenter (after Slack and Discord). Inbound, the page's actions become
// session calls (web-inbound.ts); outbound, a presenter per session draws on a WebSurface
// (web-surface.ts), whose changes go into the thread documents (page-threads.ts) and, live,
// to every open page over server-sent events (live-updates.ts). The HTTP side and everything
// about who may ask lives in http-server.ts.
//
// Decisions a reader must hold:
// - It binds to 127.0.0.1 only, and every request for data or an action carries an access
//   token, new at each start unless PLAYGROUND_TOKEN fixes it, printed in the address's
//   fragment at start-up and never logged (it joins the secrets the logger masks); see
//   http-server.ts and access-token.ts.
// - The page's threads are the playground's only copy of what was shown: they are kept in the
//   bot's store (web:* keys), so a reload and a restart redraw them, and a click on a card
//   posted before a restart resumes the turn, as on the other platforms.
// - Like every connector it is built before recovery (so resumed turns are drawn), takes
//   requests only after `start`, and shuts down in two steps: `stopTaking` (new messages are
//   refused, pending answer text is written before the store is fenced), then `close`.
// - Files a person attaches are staged on disk until the turn takes them (upload-staging.ts,
//   the 'web' FileSource); files the bot posts are copied aside and downloaded by a random
//   id (posted-files.ts, the 'web' FileSink). Both live in one private folder made for this
//   run (run-folder.ts: 0700, under the system's temp folder unless `filesDir` is given) and
//   removed at close: like the access token, they die with the run.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import type { Core } from '../../src/core.js';
import type { EngineLogger } from '../../src/engine/index.js';
import { isDemoModel } from '../../src/providers/model-ref.js';
import type { SessionRecord } from '../../src/sessions/thread-records.js';
import type { ChatConnector, ConnectorStarted } from '../shared/chat-connector.js';
import { presenterObserver, ThreadPresenter } from '../shared/thread-presenter.js';
import type { SecretMasker } from '../../src/secrets/index.js';
import { AccessToken, accessTokenForStart, forgetStoredToken } from './access-token.js';
import { PlaygroundServer } from './http-server.js';
import { lastPort, rememberPort } from './page-address.js';
import { LiveUpdates } from './live-updates.js';
import { PageThreads } from './page-threads.js';
import { nameOf, WebInbound } from './web-inbound.js';
import { WebSurface } from './web-surface.js';
import { PostedFiles } from './posted-files.js';
import { makeRunFolder } from './run-folder.js';
import { UploadStaging } from './upload-staging.js';

export interface WebConnectorOptions {
  config: Pick<Config, 'PLAYGROUND_PORT' | 'GRANT_SCOPE' | 'MAX_FILE_BYTES' | 'MAX_CONVERSATION_FILE_BYTES'> &
    Partial<Pick<Config, 'MODEL' | 'PLAYGROUND_TOKEN' | 'TOOL_DISPLAY'>>;
  core: Pick<Core, 'manager' | 'observers' | 'files'> &
    Partial<Pick<Core, 'keepWritableAtShutdown' | 'feedback' | 'mask' | 'prices' | 'schedules' | 'scheduleTimezone'>>;
  /** The folder for this run's files (made if missing, removed at close); default: a new private one under the temp folder. */
  filesDir?: string;
  logger: EngineLogger;
  /** The masker the logger and the tools mask with: the access token is added to it, so no log line or tool result shows it. */
  secrets?: SecretMasker;
}

export class WebConnector implements ChatConnector {
  readonly name = 'playground';
  private readonly presenters = new Map<string, ThreadPresenter>();
  private readonly live = new LiveUpdates();
  private readonly server: PlaygroundServer;
  private readonly token: AccessToken;
  private readonly uploads: UploadStaging;
  private readonly posted: PostedFiles;
  private taking = false;
  private url_ = '';

  private constructor(
    private readonly options: WebConnectorOptions,
    readonly threads: PageThreads,
    token: string,
    private readonly filesDir: string,
  ) {
    this.token = new AccessToken(token);
    const { config } = options;
    this.uploads = new UploadStaging({
      dir: join(filesDir, 'uploads'),
      maxFileBytes: config.MAX_FILE_BYTES,
      maxStagedBytes: config.MAX_CONVERSATION_FILE_BYTES,
    });
    this.posted = new PostedFiles({
      dir: join(filesDir, 'posted'),
      threads,
      origin: () => `http://127.0.0.1:${this.port}`,
    });
    threads.onUpdate((update) => {
      this.live.broadcast(update);
      if (update.type === 'removed') {
        this.posted
          .removeThread(update.threadId)
          .catch((error: unknown) =>
            options.logger.warn({ err: error }, "playground: could not remove a forgotten thread's files"),
          );
      }
    });
    const inbound = new WebInbound({
      core: options.core,
      threads,
      live: this.live,
      logger: options.logger,
      presenterFor: (session) => this.presenterFor(session),
      taking: () => this.taking,
      uploads: this.uploads,
      maxFileBytes: config.MAX_FILE_BYTES,
      demo: isDemoModel(options.config.MODEL),
      ...(options.config.GRANT_SCOPE ? { grantScope: options.config.GRANT_SCOPE } : {}),
      ...(options.core.feedback ? { feedback: options.core.feedback } : {}),
    });
    this.server = new PlaygroundServer({
      token: this.token,
      live: this.live,
      actions: inbound,
      uploads: this.uploads,
      posted: this.posted,
      onError: (error) => options.logger.error({ err: error }, 'playground: a request failed'),
    });
  }

  /** Read the stored threads and register the presenters with the core. Requests flow only after start(). */
  static async create(options: WebConnectorOptions): Promise<WebConnector> {
    // The page's threads are what it shows, not conversation state: the shutdown's fence
    // leaves them writable, so the "restarting" note is still there after a reload.
    options.core.keepWritableAtShutdown?.('web:');
    const threads = await PageThreads.load(options.core.manager.records.documents, options.logger);
    await forgetStoredToken(options.core.manager.records.documents);
    const token = accessTokenForStart(options.config.PLAYGROUND_TOKEN);
    options.secrets?.add([token]);
    const filesDir = options.filesDir ?? (await makeRunFolder());
    const connector = new WebConnector(options, threads, token, filesDir);
    options.core.observers.add(
      'web',
      presenterObserver((session) => connector.presenterFor(session)),
    );
    options.core.files.registerSource('web', connector.uploads.source);
    options.core.files.registerSink('web', connector.posted.sink);
    return connector;
  }

  async start(): Promise<ConnectorStarted> {
    // PLAYGROUND_PORT=0 (the default): the last run's port when it is free (page-address.ts).
    const wanted = this.options.config.PLAYGROUND_PORT;
    const keyv = this.options.core.manager.records.documents;
    const last = wanted === 0 ? await lastPort(keyv) : undefined;
    const port = last === undefined ? await this.server.listen(wanted) : await this.server.listenPreferring(last);
    if (wanted === 0 && port !== last) await rememberPort(keyv, port);
    // In the fragment: the browser never sends it to a server (no log, no Referer); the page
    // takes it from there and out of the address bar (page/access-token.js).
    this.url_ = `http://127.0.0.1:${port}/#token=${this.token.value}`;
    this.taking = true;
    // The log line has the address without the token; the terminal line has it whole (playground.ts).
    return { message: 'Playground started', fields: { url: `http://127.0.0.1:${port}/`, port } };
  }

  /** The page's address with its token in the fragment (known once started): for the terminal, never the log. */
  get url(): string {
    return this.url_;
  }

  get port(): number {
    return this.server.port;
  }

  async stopTaking(): Promise<void> {
    this.taking = false;
    // Before the core fences the store: answer text still waiting for its timer.
    await this.threads.flush();
  }

  async close(): Promise<void> {
    this.taking = false;
    await this.threads.flush();
    this.live.close();
    await this.server.close();
    this.uploads.close();
    await rm(this.filesDir, { recursive: true, force: true });
  }

  /** The thread's presenter, built on demand (one per session; the playground has few). */
  private presenterFor(session: SessionRecord): ThreadPresenter {
    const known = this.presenters.get(session.id);
    if (known) return known;
    const { core, logger, config } = this.options;
    const surface = new WebSurface(this.threads, WebSurface.threadIdOf(session), nameOf);
    const presenter = new ThreadPresenter(
      {
        surface,
        records: core.manager.records,
        logger,
        grantScope: config.GRANT_SCOPE,
        toolDisplay: config.TOOL_DISPLAY ?? 'cards',
        ...(core.feedback ? { feedback: core.feedback } : {}),
        ...(core.mask ? { mask: core.mask } : {}),
        ...(core.prices ? { prices: core.prices } : {}),
      },
      session,
    );
    this.presenters.set(session.id, presenter);
    return presenter;
  }
}
