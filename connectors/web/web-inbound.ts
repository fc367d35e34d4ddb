// What the person at the page does, turned into session calls, as the Slack and Discord
// connectors turn their platform's events: a message that mentions the bot starts a thread
// (`deliver`), a reply in the thread continues or steers it (`deliver`: the session decides),
// 🛑 is `interrupt`, a card's button is the shared prompt click (prompt-click.ts), Retry and
// Continue are `controls.retry`, 👍 / 👎 are the feedback book's (web-feedback.ts), and `/status`, `/model …` and the other thread commands go
// to the shared command runner. The access policy is the core's, applied as on any platform:
// the person is one user, `local`, who starts their threads.
//
// Refusals (who may not, a stale card, nothing to stop) are the HTTP answer: the page that
// asked shows them to its person alone ("only visible to you"), as Slack shows an ephemeral
// message. A thread command's private answers arrive the same way over the live stream.
import { createHmac, randomBytes } from 'node:crypto';
import type { Core } from '../../src/core.js';
import type { EngineLogger, MessageSource } from '../../src/engine/index.js';
import { sessionIdOf, type SessionKey, type SessionRecord } from '../../src/sessions/thread-records.js';
import { commandHelpLines } from '../shared/command-table.js';
import { answerPromptClick } from '../shared/prompt-click.js';
import { stopThread } from '../shared/thread-stop.js';
import type { ApprovalView } from '../shared/approval-view.js';
import type { CallText } from '../shared/call-arguments.js';
import { storedCallText } from '../shared/stored-call-text.js';
import { runThreadCommand, type CommandMarkup } from '../shared/thread-commands.js';
import type { ThreadPresenter } from '../shared/thread-presenter.js';
import { fullViewModel, webCardHoldsAll, withNames, type NameOf } from './card-model.js';
import type { ActionAnswer, PlaygroundActions } from './http-server.js';
import type { LiveUpdates, PageSnapshot } from './live-updates.js';
import { newMessageId, type PageThread, type PageThreads, type Person } from './page-threads.js';
import type {
  ClickBody,
  FeedbackBody,
  FeedbackReasonBody,
  FullViewBody,
  NoteActionBody,
  PostMessage,
  StopBody,
  ToolResultBody,
} from './request-bodies.js';
import { fullResultText } from './result-view.js';
import { WebFeedback } from './web-feedback.js';
import type { FeedbackBook } from '../../src/feedback/feedback-book.js';
import type { UploadStaging } from './upload-staging.js';
import type { z } from 'zod';

/** The person at the page. One user: they start (and so may approve in) every thread they open. */
const LOCAL_USER: Person = { id: 'local', name: 'you' };
/** The bot, as the page names it: mention `@bot` to start a thread. */
const BOT: Person = { id: 'bot', name: 'bot' };
/** Where the playground's sessions live: one workspace, one channel. */
const WORKSPACE = 'playground';
const CHANNEL = 'general';
const MENTION = /(^|\s)@bot(?![\p{L}\p{N}_])/giu;
const COMMAND = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i;

/**
 * The command table's commands as a Markdown list: the page's person runs the bot, so no command is marked for admins.
 * @internal
 */
export const COMMAND_HELP = [
  'Thread commands (type them in a thread):',
  ...commandHelpLines('web', { bullet: '-', readerIsAdmin: true }),
  '',
  "A schedule's when is read in the bot's time zone (SCHEDULE_TZ): `/schedule every weekday at 9:00 summarise the open incidents`.",
].join('\n');

/** What the bot says to a mention with nothing after it. */
const BARE_MENTION_REPLY = '👋 Yes? Reply in this thread with what you need, or `/help` for the thread commands.';

/**
 * The page renders Markdown (page/markdown.js): a backslash makes a mark literal. A person's
 * words in a command's answer (a task, a reason) are escaped at every mark that opens
 * something inside a line: code, emphasis, struck text, a link, an autolink.
 */
const WEB_MARKUP: CommandMarkup = {
  bold: (text) => `**${text}**`,
  escape: (text) => text.replace(/[\\`*_[~<]/g, (mark) => `\\${mark}`),
  switched: '🔄',
  help: COMMAND_HELP,
};

export const nameOf: NameOf = (userId) => (userId === LOCAL_USER.id ? LOCAL_USER.name : userId);

export interface WebInboundDeps {
  core: Pick<Core, 'manager' | 'spend' | 'schedules'> & Partial<Pick<Core, 'scheduleTimezone'>>;
  threads: PageThreads;
  live: LiveUpdates;
  logger: EngineLogger;
  presenterFor: (session: SessionRecord) => ThreadPresenter;
  /** False once the bot shuts down: nothing new is taken. */
  taking: () => boolean;
  /** The bot's model is the built-in demo (the page shows a banner). */
  demo: boolean;
  /** MAX_FILE_BYTES, told to the page. */
  maxFileBytes: number;
  /** Where the page's uploads wait for the message that carries them. */
  uploads: Pick<UploadStaging, 'take' | 'discard'>;
  /** GRANT_SCOPE, for the words of "always" buttons. */
  grantScope?: 'thread' | 'channel';
  /** Where 👍 / 👎 are counted (core.feedback); without it a click is refused. */
  feedback?: Pick<FeedbackBook, 'vote' | 'giveReason' | 'totals'>;
}

export class WebInbound implements PlaygroundActions {
  /** Signs the expanded views this process hands out (new at each start: a view from before it is asked again). */
  private readonly viewKey = randomBytes(32);

  private readonly votes: WebFeedback;

  constructor(private readonly deps: WebInboundDeps) {
    this.votes = new WebFeedback({
      threads: deps.threads,
      live: deps.live,
      userId: LOCAL_USER.id,
      ...(deps.feedback ? { book: deps.feedback } : {}),
    });
  }

  snapshot(): PageSnapshot {
    return {
      user: LOCAL_USER,
      bot: BOT,
      threads: this.deps.threads.all(),
      demo: this.deps.demo,
      maxFileBytes: this.deps.maxFileBytes,
    };
  }

  async postMessage(body: PostMessage): Promise<ActionAnswer> {
    if (!this.deps.taking())
      return { ok: false, status: 503, message: 'The bot is restarting; send that again in a moment.' };
    const { threads, uploads } = this.deps;
    const known = body.thread === undefined ? undefined : threads.get(body.thread);
    if (body.thread !== undefined && !known)
      return { ok: false, status: 404, message: 'There is no such thread (it may have been forgotten).' };
    const fileIds = body.files ?? [];
    const attached = uploads.take(fileIds);
    if (!attached.ok) return { ok: false, status: 409, message: attached.message };
    const mentioned = new RegExp(MENTION.source, MENTION.flags).test(body.text);
    const input = {
      kind: 'input' as const,
      id: newMessageId(),
      at: Date.now(),
      author: LOCAL_USER,
      text: body.text,
      marks: [],
      ...(attached.files.length > 0 ? { files: attached.files } : {}),
    };
    let thread: PageThread;
    if (known === undefined) {
      thread = await threads.create(input);
    } else {
      thread = known;
      await threads.add(thread.id, input);
    }
    // Files of a message the bot does not take are shown on it, and nothing will fetch them.
    const notForTheBot = async (answer: ActionAnswer): Promise<ActionAnswer> => {
      await uploads.discard(fileIds);
      return answer;
    };
    // A channel message that does not mention the bot is only a message, as in any channel.
    if (!mentioned && thread.sessionId === undefined)
      return notForTheBot({ ok: true, thread: thread.id, message: input.id, status: 'posted' });

    const text = body.text.replace(MENTION, '$1').trim();
    const key: SessionKey = { platform: 'web', workspace: WORKSPACE, channel: CHANNEL, thread: thread.id };
    const command = COMMAND.exec(text);
    if (command) {
      await this.runCommand(key, command[1]!.toLowerCase(), (command[2] ?? '').trim());
      return notForTheBot({ ok: true, thread: thread.id, message: input.id, status: 'command' });
    }
    if (!text && attached.incoming.length === 0) {
      // A bare @bot: the thread is the bot's from now on (a reply or a command there reaches it,
      // as in a thread it answered), and it says so. No turn: there is nothing to answer yet.
      await threads.attachSession(thread.id, sessionIdOf(key));
      await threads.add(thread.id, { kind: 'bot', id: newMessageId(), at: Date.now(), text: BARE_MENTION_REPLY });
      return notForTheBot({ ok: true, thread: thread.id, message: input.id, status: 'opened' });
    }
    // Known before the turn's first event, so the marks and the answer land in this thread.
    await threads.attachSession(thread.id, sessionIdOf(key));
    const source: MessageSource = {
      platform: 'web',
      workspace: WORKSPACE,
      channel: CHANNEL,
      thread: thread.id,
      userId: LOCAL_USER.id,
      userName: LOCAL_USER.name,
      messageId: input.id,
    };
    const result = await this.deps.core.manager.deliver(key, {
      text,
      userId: LOCAL_USER.id,
      eventId: `web:${input.id}`,
      source,
      ...(attached.incoming.length > 0 ? { attachments: attached.incoming } : {}),
    });
    if (result.status === 'refused') return notForTheBot({ ok: false, status: 403, message: result.reason });
    return {
      ok: true,
      thread: thread.id,
      message: input.id,
      status: result.status,
      ...('filesRefused' in result && result.filesRefused ? { notice: result.filesRefused } : {}),
    };
  }

  async stop(body: z.infer<typeof StopBody>): Promise<ActionAnswer> {
    const thread = this.deps.threads.get(body.thread);
    if (!thread?.sessionId) return { ok: false, status: 404, message: 'There is no conversation in this thread.' };
    const { result } = await stopThread(
      { manager: this.deps.core.manager, presenterFor: this.deps.presenterFor },
      thread.sessionId,
      LOCAL_USER.id,
    );
    if (result.status === 'refused') return this.refuse(403, result.reason);
    if (result.status === 'idle' || result.status === 'unknown_session')
      return this.refuse(409, 'Nothing is running in this thread.');
    return { ok: true, status: result.status };
  }

  async click(body: z.infer<typeof ClickBody>): Promise<ActionAnswer> {
    let refusal: string | undefined;
    // From the expanded view only with the proof the server handed out with it (`fullView`).
    const item =
      body.view !== undefined && this.viewProof(body.item) === body.view
        ? await this.deps.core.manager.records.prompt(body.item)
        : undefined;
    const place = {
      ...(item ? { fullViewOf: item.toolCallId } : {}),
      cardHoldsAll: (_call: CallText, view: ApprovalView) => webCardHoldsAll(view),
    };
    const say = async (text: string): Promise<void> => {
      refusal = withNames(text, nameOf);
    };
    await answerPromptClick(
      this.deps.core,
      this.deps.presenterFor,
      { item: body.item, choice: body.choice, userId: LOCAL_USER.id },
      say,
      place,
    );
    return refusal === undefined ? { ok: true } : this.refuse(409, refusal);
  }

  /**
   * Show all: every character of the item's call and the buttons to decide it, with a proof
   * (an HMAC of the item id under this process's key) that a click from that view sends back:
   * the server takes an approval of a call too long for its card only with it.
   */
  async fullView(body: z.infer<typeof FullViewBody>): Promise<ActionAnswer> {
    const { core, presenterFor } = this.deps;
    const { records } = core.manager;
    const item = await records.prompt(body.item);
    const record = item ? await records.session(item.sessionId) : undefined;
    const call =
      item && record
        ? (presenterFor(record).fullTextOf(item.toolCallId) ??
          (await storedCallText(records, item.sessionId, item.toolCallId)))
        : undefined;
    if (!item || !call) return this.refuse(404, 'I no longer have this call (the thread may have been forgotten).');
    return { ok: true, view: fullViewModel(call, item, this.deps.grantScope), proof: this.viewProof(item.id) };
  }

  /**
   * A card's "Full result": the whole result of its call, as the model got it (masked, as the
   * transcript holds it), read when the person opens the toggle rather than stored on the page.
   */
  async toolResult(body: z.infer<typeof ToolResultBody>): Promise<ActionAnswer> {
    const thread = this.deps.threads.get(body.thread);
    const card = thread?.messages.find((message) => message.id === body.message);
    if (!thread?.sessionId || card?.kind !== 'card') return this.refuse(404, 'That card is not there any more.');
    const transcript = await this.deps.core.manager.records.transcript(thread.sessionId);
    const result = transcript.find((message) => message.role === 'tool' && message.tool_call_id === card.toolCallId);
    if (result?.role !== 'tool')
      return this.refuse(404, 'I no longer have this result (the thread may have been forgotten).');
    return { ok: true, ...fullResultText(result.content) };
  }

  private viewProof(itemId: string): string {
    return createHmac('sha256', this.viewKey).update(itemId).digest('base64url');
  }

  async noteAction(body: z.infer<typeof NoteActionBody>): Promise<ActionAnswer> {
    const thread = this.deps.threads.get(body.thread);
    const note = thread?.messages.find((message) => message.id === body.message);
    if (!thread?.sessionId || note?.kind !== 'note' || !note.action)
      return { ok: false, status: 404, message: 'That button is not there any more.' };
    // The playground's one person runs the bot: an admin for a Continue past a spend limit.
    const result = await this.deps.core.manager.controls.retry(thread.sessionId, LOCAL_USER.id, { operator: true });
    if (result.status === 'refused') return this.refuse(403, result.reason);
    if (result.status === 'busy') return this.refuse(409, 'I am already working in this thread.');
    if (result.status !== 'done') return this.refuse(409, 'There is nothing to retry here any more.');
    // The button has done its job: the note says who used it instead.
    const done = `${note.action.kind === 'retry' ? 'Retried' : 'Continued'} by @${LOCAL_USER.name}`;
    await this.deps.threads.change(thread.id, note.id, (message) =>
      message.kind === 'note' ? { id: message.id, at: message.at, kind: 'note', text: message.text, done } : message,
    );
    return { ok: true };
  }

  feedback(body: z.infer<typeof FeedbackBody>): Promise<ActionAnswer> {
    return this.votes.vote(body);
  }

  feedbackReason(body: z.infer<typeof FeedbackReasonBody>): Promise<ActionAnswer> {
    return this.votes.reason(body);
  }

  private async runCommand(key: SessionKey, name: string, rest: string): Promise<void> {
    const { threads, core, logger } = this.deps;
    await runThreadCommand(
      { name, args: rest ? rest.split(/\s+/) : [] },
      {
        connector: {
          whisper: async (_channel, _user, threadId, text) => this.whisper(threadId, withNames(text, nameOf)),
          post: async (_channel, threadId, text) =>
            threads.add(threadId, { kind: 'bot', id: newMessageId(), at: Date.now(), text: withNames(text, nameOf) }),
        },
        key,
        userId: LOCAL_USER.id,
        manager: core.manager,
        logger,
        ...(this.deps.feedback ? { feedback: this.deps.feedback } : {}),
        ...(core.spend ? { spend: core.spend } : {}),
        ...(core.schedules ? { schedules: core.schedules } : {}),
        // The page's person has no platform time zone: SCHEDULE_TZ.
        defaultTimezone: core.scheduleTimezone ?? 'UTC',
        // The playground's one user runs the bot: the totals are theirs to see.
        operator: true,
      },
      WEB_MARKUP,
    );
    // `/forget` deleted the conversation: its drawing goes too (the page is part of what was stored).
    if (name === 'forget' && !(await core.manager.records.isOurs(key))) await threads.remove(key.thread);
  }

  /** A refusal goes back in the HTTP answer; the page that asked shows it privately. */
  private refuse(status: number, message: string): ActionAnswer {
    return { ok: false, status, message };
  }

  private whisper(threadId: string | undefined, text: string): void {
    this.deps.live.broadcast({ type: 'whisper', ...(threadId ? { threadId } : {}), text, at: Date.now() });
  }
}
