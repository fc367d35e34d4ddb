// The whole bot against fakes: the real Bolt app in HTTP mode, signed requests from a fake
// Slack, the real core with the real OpenAI provider against a fake OpenAI server, and a
// SQLite store in a temporary folder. Each scenario drives it as Slack and a user would.
import { loadConfig } from '../../src/config.js';
import { startCore, type Core } from '../../src/core.js';
import { SlackConnector } from '../../connectors/slack/slack-connector.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import {
  agentSessionStopped,
  appMention,
  blockActions,
  eventCallback,
  reactionAdded,
  SLACK_IDS,
  threadMessage,
  dmMessage,
} from '../fakes/slack-payloads.js';
import { clickFeedback, submitView } from './slack-harness-feedback.js';
import type { SlackFileObject } from '../fakes/slack-files.js';
import { FakeSlack } from '../fakes/slack-server.js';
import type { ScheduleClock } from '../../src/schedules/scheduler.js';
import { sendEvent, sendInteraction } from '../fakes/slack-signer.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';

export const SECRET = 'test-signing-secret';

export interface SlackBot {
  slack: FakeSlack;
  llm: FakeOpenAI;
  core: Core;
  connector: SlackConnector;
  url: string;
  dir: string;
  logs: ReturnType<typeof memoryLogger>;
  /** A user mentions the bot in a channel; returns the message's ts (the thread root). */
  mention(
    text: string,
    options?: {
      user?: string;
      threadTs?: string;
      channel?: string;
      eventId?: string;
      retryNum?: number;
      userTeam?: string;
      files?: SlackFileObject[];
    },
  ): Promise<string>;
  /** A reply in a thread; with `files` it is a `file_share` (its text may be empty). */
  reply(
    threadTs: string,
    text: string,
    options?: { user?: string; channel?: string; userTeam?: string; files?: SlackFileObject[] },
  ): Promise<string>;
  /** Deliver an event as Slack would (signed), for payloads the helpers above do not build. */
  deliver(event: Parameters<typeof eventCallback>[0]): Promise<void>;
  dm(text: string, options?: { user?: string }): Promise<string>;
  react(ts: string, reaction: string, options?: { user?: string; channel?: string }): Promise<void>;
  /**
   * Slack's Stop button on the thread's agent session (`agent_session_stopped`). The same
   * `eventTs` and `eventId` with a `retryNum` play Slack delivering that click again.
   */
  stopButton(
    threadTs: string,
    options?: {
      user?: string;
      channel?: string;
      eventTs?: string;
      eventId?: string;
      retryNum?: number;
      streamingMessageTs?: string[];
    },
  ): Promise<void>;
  /**
   * Click a button of a card (found by its action id prefix and, optionally, choice).
   * `seen`: the message as the person's Slack still shows it (a copy taken earlier), for a
   * click on a card that has changed since; by default the message as it is now.
   */
  click(
    messageTs: string,
    match: { actionId: string; choice?: string },
    options?: { user?: string; channel?: string; seen?: { text: string; blocks?: unknown[] } },
  ): Promise<string>;
  /** Click 👍 ('up') or 👎 ('down') of the feedback buttons on a message; returns the response_url id. */
  feedback(messageTs: string, vote: 'up' | 'down', options?: { user?: string; channel?: string }): Promise<string>;
  /** Submit a modal the bot opened (FakeSlack.views() entry) with what the person typed in its inputs. */
  submitView(
    opened: { id: string; view: Record<string, unknown> },
    values: Record<string, Record<string, string | null>>,
    options?: { user?: string },
  ): Promise<void>;
  idle(): Promise<void>;
  /**
   * For a check that nothing happened: resolves once every event sent before it has been
   * handled. A later event whose effect is seen proves it: `@bot /help` in a thread of its
   * own, answered privately (Slack events are handled in the order the bot answered them, and
   * it answers each once its listener has run), then no turn running. The barrier's own
   * traces are its mention, one `chat.postEphemeral` and its private answer.
   */
  barrier(): Promise<void>;
  /**
   * The process dies: Slack can no longer reach this bot and nothing is shut down (a turn
   * waiting for a click stays waiting, nothing more is written). Boot another bot on the same
   * `dir`, `slack` and `llm` to play the restart; `stop()` later releases what this one held.
   */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export interface BootOptions {
  env?: Record<string, string>;
  dir?: string;
  slack?: FakeSlack;
  llm?: FakeOpenAI;
  /** The clock the spend limits' days follow (core option `spendClock`). */
  spendClock?: () => number;
  /** The clock and timers schedules run on (core option `scheduleClock`). */
  scheduleClock?: ScheduleClock;
}

export async function bootSlackBot(options: BootOptions = {}): Promise<SlackBot> {
  const own = options.dir === undefined ? await tempDir() : undefined;
  const dir = options.dir ?? own!.path;
  const slack =
    options.slack ??
    (await new FakeSlack({
      users: [
        { id: SLACK_IDS.humanUserId, name: 'ada', realName: 'Ada Lovelace', displayName: 'ada' },
        { id: 'U0HUMAN002', name: 'bob', realName: 'Bob', displayName: 'bob' },
      ],
    }).start());
  const llm = options.llm ?? (await new FakeOpenAI().start());
  const logs = memoryLogger();
  const config = loadConfig({
    ...coreTestEnv(dir, llm),
    SLACK_BOT_TOKEN: 'xoxb-test',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    ...options.env,
  });
  const core = await startCore(config, {
    logger: logs,
    ...(options.spendClock ? { spendClock: options.spendClock } : {}),
    ...(options.scheduleClock ? { scheduleClock: options.scheduleClock } : {}),
  });
  const connector = await SlackConnector.create({ config, core, logger: logs });
  await core.recover();
  await connector.start();
  const url = `http://127.0.0.1:${connector.port}/slack/events`;
  let responses = 0;
  let crashed = false;

  const deliver = async (event: Parameters<typeof eventCallback>[0], eventId?: string, retryNum?: number) => {
    const response = await sendEvent(
      url,
      SECRET,
      eventCallback(event, eventId ? { eventId } : {}),
      retryNum !== undefined ? { retryNum, retryReason: 'http_timeout' } : {},
    );
    if (response.status !== 200) throw new Error(`the bot answered ${response.status}: ${response.body}`);
  };

  const bot: SlackBot = {
    slack,
    llm,
    core,
    connector,
    url,
    dir,
    logs,
    async mention(text, o = {}) {
      const event = appMention({
        text,
        user: o.user ?? SLACK_IDS.humanUserId,
        ...(o.threadTs ? { threadTs: o.threadTs } : {}),
        ...(o.channel ? { channel: o.channel } : {}),
        ...(o.userTeam ? { userTeam: o.userTeam } : {}),
        ...(o.files ? { files: o.files } : {}),
      });
      slack.addMessage(event);
      await deliver(event, o.eventId, o.retryNum);
      return event.ts;
    },
    async reply(threadTs, text, o = {}) {
      const event = threadMessage({
        text,
        threadTs,
        user: o.user ?? SLACK_IDS.humanUserId,
        ...(o.channel ? { channel: o.channel } : {}),
        ...(o.userTeam ? { userTeam: o.userTeam } : {}),
        ...(o.files ? { files: o.files } : {}),
      });
      slack.addMessage(event);
      await deliver(event);
      return event.ts;
    },
    async dm(text, o = {}) {
      const event = dmMessage({ text, user: o.user ?? SLACK_IDS.humanUserId });
      slack.addMessage(event);
      await deliver(event);
      return event.ts;
    },
    async react(ts, reaction, o = {}) {
      await deliver(
        reactionAdded({
          reaction,
          ts,
          user: o.user ?? SLACK_IDS.humanUserId,
          ...(o.channel ? { channel: o.channel } : {}),
        }),
      );
    },
    async stopButton(threadTs, o = {}) {
      const event = agentSessionStopped({
        threadTs,
        ...(o.user ? { user: o.user } : {}),
        ...(o.channel ? { channel: o.channel } : {}),
        ...(o.eventTs ? { eventTs: o.eventTs } : {}),
        ...(o.streamingMessageTs ? { streamingMessageTs: o.streamingMessageTs } : {}),
      });
      await deliver(event, o.eventId, o.retryNum);
    },
    async click(messageTs, match, o = {}) {
      const channel = o.channel ?? SLACK_IDS.channelId;
      const message = o.seen ?? slack.message(channel, messageTs);
      if (!message) throw new Error(`no message ${messageTs}`);
      const buttons = (message.blocks ?? []).flatMap(
        (block) =>
          ((block as { elements?: unknown[] }).elements ?? []) as {
            action_id?: string;
            value?: string;
            type?: string;
          }[],
      );
      const button = buttons.find(
        (b) =>
          b.type === 'button' &&
          b.action_id?.startsWith(match.actionId) &&
          (match.choice === undefined || (JSON.parse(b.value ?? '{}') as { choice?: string }).choice === match.choice),
      );
      if (!button)
        throw new Error(
          `no ${match.actionId} ${match.choice ?? ''} button on ${messageTs}: ${JSON.stringify(message.blocks)}`,
        );
      const responseId = `r${++responses}`;
      const response = await sendInteraction(
        url,
        SECRET,
        blockActions({
          actionId: button.action_id!,
          value: button.value!,
          messageTs,
          channel,
          user: o.user ?? SLACK_IDS.humanUserId,
          responseUrl: slack.responseUrl(responseId),
          // Slack sends the message as it was when clicked.
          messageText: message.text,
          ...(message.blocks ? { messageBlocks: message.blocks } : {}),
        }),
      );
      if (response.status !== 200) throw new Error(`the click got ${response.status}`);
      return responseId;
    },
    feedback: (messageTs, vote, o = {}) =>
      clickFeedback({ slack, url, secret: SECRET, responseId: `r${++responses}` }, messageTs, vote, o),
    submitView: (opened, values, o = {}) => submitView({ url, secret: SECRET }, opened, values, o),
    deliver: (event) => deliver(event),
    idle: () => core.manager.idle(),
    async barrier() {
      const before = slack.ephemerals().length;
      const root = await bot.mention('/help');
      await waitFor(
        () =>
          slack
            .ephemerals()
            .slice(before)
            .some((answer) => answer.threadTs === root),
        8_000,
      );
      await core.manager.idle();
    },
    async crash() {
      crashed = true;
      await connector.stop();
    },
    async stop() {
      if (crashed) {
        // A dead process has no turns: end the abandoned ones at once instead of waiting
        // out the shutdown grace period for a click that will never come.
        await core.manager.shutdown(0);
      } else {
        await connector.stop();
      }
      await core.close();
      if (!options.slack) await slack.stop();
      if (!options.llm) await llm.stop();
      await own?.remove();
    },
  };
  return bot;
}

/** The card (a bot message in the thread) whose text mentions the tool. */
export async function waitForCard(
  bot: SlackBot,
  threadTs: string,
  tool: string,
  predicate: (text: string) => boolean = () => true,
  channel: string = SLACK_IDS.channelId,
) {
  let found: { ts: string; text: string; blocks: unknown[] } | undefined;
  await waitFor(() => {
    const message = bot.slack
      .thread(channel, threadTs)
      .find(
        (m) =>
          m.user === SLACK_IDS.botUserId &&
          JSON.stringify(m.blocks ?? []).includes(`*${tool}*`) &&
          predicate(JSON.stringify(m.blocks ?? [])),
      );
    if (message) found = { ts: message.ts, text: message.text ?? '', blocks: message.blocks ?? [] };
    return found !== undefined;
  }, 15_000);
  return found!;
}
