// One run of the restart chaos test (test/sessions/chaos-restart.test.ts): the whole bot as
// a child process, a fake model that asks for six shell steps, a user who approves every
// card the moment it shows, and SIGKILLs at the moments the seed's plan names.
//
// The one idea: the fake model decides from the conversation it is sent, never from a
// script, and never asks again for a step it already asked for. So whatever the kills do,
// a step that runs twice, an orphan call or a stale card is the bot's doing, not the fake's.
//
// The user, as a person would: clicks Approve on every card that offers it; after a restart
// clicks once more every Approve ever seen (an old button may be the live one); and says
// "continue" in the thread when nothing has moved for a while.
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedRequest } from '../fakes/http-fake.js';
import type { FakeAnswer, FakeOpenAI } from '../fakes/openai-server.js';
import { appMention, blockActions, eventCallback, SLACK_IDS, threadMessage } from '../fakes/slack-payloads.js';
import type { FakeSlack, StoredMessage } from '../fakes/slack-server.js';
import { sendEvent, sendInteraction } from '../fakes/slack-signer.js';
import { slackHttpEnv } from './bot-fakes.js';
import { BotProcess } from './bot-process.js';
import { describePlan, type ChaosPlan, type KillMoment } from './chaos-plan.js';
import { inOnlyConversation } from './conversation-folders.js';

export const STEPS = 6;
const FINAL_TEXT = 'All six steps are done.';
/** What the model is told about a call the restart cut (the start of its error reason). */
export const INTERRUPTED_RESULT = 'interrupted by a restart';
const SECRET = 'chaos-signing-secret';
const C = SLACK_IDS.channelId;

/** How often the user looks at the thread (and the file), in ms. */
const TICK_MS = 15;
/** With no sign of life for this long, the user says "continue". */
const IDLE_MS = 2_000;
const MAX_CONTINUES = 3;
const RUN_DEADLINE_MS = 45_000;
/** Between SSE events: a one-call answer streams for ~160 ms, a two-call one ~260 ms. */
const STREAM_EVENT_DELAY_MS = 20;

/** A side effect that shows how often it ran: one line per run, then 300 ms "mid-command". */
const stepCommand = (step: number) => `echo step-${step} >> chaos.txt && sleep 0.3`;

// ---------------------------------------------------------------------------------------
// The model's side of the wire
// ---------------------------------------------------------------------------------------

export interface WireToolCall {
  id: string;
  function: { name: string; arguments: string };
}
export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}

export const messagesOf = (request: RecordedRequest): WireMessage[] =>
  (request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];

export function stepOf(call: WireToolCall): number | undefined {
  const match = /step-(\d+)/.exec(call.function.arguments);
  return match ? Number(match[1]) : undefined;
}

export const callsIn = (messages: WireMessage[]): WireToolCall[] =>
  messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));

/** The result content the model got for each step in one request. */
export function resultsByStep(messages: WireMessage[]): Map<number, string> {
  const steps = new Map<string, number>();
  for (const call of callsIn(messages)) {
    const step = stepOf(call);
    if (step !== undefined) steps.set(call.id, step);
  }
  const results = new Map<number, string>();
  for (const message of messages) {
    const step = message.role === 'tool' ? steps.get(message.tool_call_id ?? '') : undefined;
    if (step !== undefined)
      results.set(step, typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
  }
  return results;
}

/**
 * The next answer for a conversation: the next group of steps not yet asked for (grouped as
 * the plan says), or the final text once all six were. A "continue" gets the same logic; a
 * step whose call is in the history is never asked for again, whatever its result says.
 */
function nextAnswer(plan: ChaosPlan, messages: WireMessage[]): { answer: FakeAnswer; steps: number[] } {
  const asked = Math.max(0, ...callsIn(messages).map((call) => stepOf(call) ?? 0));
  if (asked >= STEPS) return { answer: { text: FINAL_TEXT, chunkSize: 16 }, steps: [] };
  const end = plan.groupEnds.find((groupEnd) => groupEnd > asked) ?? STEPS;
  const steps = Array.from({ length: end - asked }, (_, i) => asked + 1 + i);
  return {
    answer: {
      toolCalls: steps.map((step) => ({ name: 'run_shell', arguments: { command: stepCommand(step) } })),
      chunkSize: 16,
    },
    steps,
  };
}

// ---------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------

interface ApproveButton {
  value: string;
  actionId: string;
  ts: string;
  step: number | undefined;
}

/** One life of the bot process and what happened in it (the plan's moments count per life). */
interface Life {
  bot: BotProcess;
  number: number;
  kill: KillMoment | undefined;
  killed: boolean;
  requests: number;
  newCards: number;
  clicks: number;
  lines: number;
  finished: number;
  clicked: Set<string>;
}

export interface ChaosSetup {
  plan: ChaosPlan;
  slack: FakeSlack;
  llm: FakeOpenAI;
  /** A temporary folder: the store, the workspace (chaos.txt) and the bot's cwd. */
  dir: string;
}

export class ChaosRun {
  readonly timeline: string[] = [];
  readonly lives: Life[] = [];
  killsFired = 0;
  continues = 0;
  clicksSent = 0;
  private root = '';
  private readonly startedAt = Date.now();
  private readonly buttons = new Map<string, ApproveButton>();
  private readonly finishedSteps = new Set<number>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private killPending = false;
  private linesSeen = 0;

  constructor(private readonly setup: ChaosSetup) {
    setup.llm.answerWith(
      (request) => {
        const messages = messagesOf(request);
        const { answer, steps } = nextAnswer(setup.plan, messages);
        this.onModelRequest(messages, steps);
        return answer;
      },
      { delayMs: STREAM_EVENT_DELAY_MS },
    );
  }

  get chaosFile(): string {
    // The run's one thread has its own folder (WORKSPACE_SCOPE=thread).
    return inOnlyConversation(join(this.setup.dir, 'workspace'), 'chaos.txt');
  }

  /** What happened, in order, for assertion messages. */
  get story(): string {
    return `\nseed ${this.setup.plan.seed}: ${describePlan(this.setup.plan)}\n${this.timeline.join('\n')}`;
  }

  /** The lines the steps wrote, in order. */
  async sideEffects(): Promise<string[]> {
    return (await readFile(this.chaosFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  }

  /** The tool cards of a step (normally one: its card is edited in place). */
  cardsOf(step: number): StoredMessage[] {
    return this.thread().filter(
      (m) => m.user === SLACK_IDS.botUserId && new RegExp(`run_shell echo step-${step} `).test(m.text),
    );
  }

  /** The user's part, start to end: mention the bot, then play along until the turn has finished. */
  async play(): Promise<void> {
    await this.boot();
    const event = appMention({ text: 'please run the six chaos steps' });
    this.setup.slack.addMessage(event);
    this.root = event.ts;
    const response = await sendEvent(this.life.bot.eventsUrl, SECRET, eventCallback(event));
    if (response.status !== 200) throw new Error(`the bot answered the mention with ${response.status}`);
    this.note('mentioned the bot');
    await this.untilFinished();
  }

  async dispose(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const life of this.lives) await life.bot.kill();
    await Promise.allSettled([...this.inflight]);
  }

  /** The timeline, the model requests, the Slack calls and each life's logs, in $TMPDIR. */
  async dumpDiagnostics(): Promise<string> {
    const { slack, llm, plan } = this.setup;
    const file = join(tmpdir(), `chaos-restart-seed-${plan.seed}.log`);
    const requests = llm.requests.map(
      (request, i) =>
        `#${i + 1} ${JSON.stringify(
          messagesOf(request).map((m) => ({
            role: m.role,
            id: m.tool_call_id,
            calls: m.tool_calls?.map((c) => `${c.id}:step-${stepOf(c)}`),
            content: typeof m.content === 'string' ? m.content.slice(0, 160) : m.content,
          })),
        )}`,
    );
    const slackCalls = slack.calls.map((call) => {
      const answer = call.answer as { ts?: string; error?: string } | undefined;
      const field = (name: string) => (typeof call.args[name] === 'string' ? call.args[name] : '');
      return `${call.at} ${call.method} ${field('ts')} "${field('text').slice(0, 120)}" -> ${answer?.ts ?? answer?.error ?? call.status}`;
    });
    const lives = this.lives.map(
      (life) =>
        `--- life ${life.number} stdout\n${life.bot.stdout}\n--- life ${life.number} stderr\n${life.bot.stderr}`,
    );
    await writeFile(
      file,
      [
        `${this.story.trim()}\ngroups ${plan.groupEnds.join(',')}`,
        '--- model requests',
        ...requests,
        '--- Slack calls',
        ...slackCalls,
        ...lives,
      ].join('\n'),
    );
    return file;
  }

  /** One line of figures: how the run went (for CHAOS_VERBOSE). */
  summary(cut: number[]): string {
    const recoveries = this.lives.slice(1).map((life) => {
      const line = life.bot.stdout.split('\n').find((l) => l.includes('recovered sessions after start-up'));
      const report = line ? (JSON.parse(line) as Record<string, unknown>) : {};
      return (
        ['resumed', 'started', 'waiting', 'settled'].find(
          (kind) => Array.isArray(report[kind]) && (report[kind] as unknown[]).length > 0,
        ) ?? 'nothing'
      );
    });
    const cards = Array.from({ length: STEPS }, (_, i) =>
      this.cardsOf(i + 1).map((card) => `${i + 1}:${card.text.split(':')[0]}`),
    ).flat();
    return (
      `seed ${this.setup.plan.seed} (${describePlan(this.setup.plan)}): ${this.lives.length} lives, ${this.killsFired} kills, ` +
      `recovery ${recoveries.join('/')}, ${this.setup.llm.requests.length} model requests, ${this.continues} "continue", ` +
      `${this.clicksSent} clicks (${this.setup.slack.responsePosts.length} answered privately), cut steps [${cut.join(',')}], cards ${cards.join(' ')}`
    );
  }

  // ---- the user ----------------------------------------------------------------------

  private get life(): Life {
    return this.lives[this.lives.length - 1]!;
  }

  private note(text: string): void {
    this.timeline.push(`${String(Date.now() - this.startedAt).padStart(6)} ms  ${text}`);
  }

  private thread(): StoredMessage[] {
    return this.setup.slack.thread(C, this.root);
  }

  private async boot(): Promise<void> {
    const { slack, llm, dir, plan } = this.setup;
    const number = this.lives.length + 1;
    const bot = await BotProcess.start(slackHttpEnv({ dir, slack, llm }, SECRET), dir);
    this.lives.push({
      bot,
      number,
      kill: plan.kills[number - 1],
      killed: false,
      requests: 0,
      newCards: 0,
      clicks: 0,
      lines: 0,
      finished: 0,
      clicked: new Set(),
    });
    this.killPending = false;
    this.note(`life ${number} started (port ${bot.port})`);
  }

  private async untilFinished(): Promise<void> {
    const deadline = Date.now() + RUN_DEADLINE_MS;
    let lastProgressAt = Date.now();
    let signature = '';
    for (;;) {
      if (Date.now() > deadline) throw new Error(`the turn did not finish within ${RUN_DEADLINE_MS} ms${this.story}`);
      if (!this.life.bot.alive) {
        const code = await this.life.bot.exited;
        // Only our SIGKILLs may end a life: a bot that dies by itself is a failure, not chaos.
        if (!this.life.killed)
          throw new Error(`the bot exited by itself (code ${code})${this.story}\n${this.life.bot.stderr.slice(-2000)}`);
        await this.boot();
        lastProgressAt = Date.now();
      }
      if (!this.killPending && this.finished()) {
        this.note('the final answer is in the thread');
        break;
      }
      this.watchThread();
      await this.watchFile();
      const now = Date.now();
      const current = `${this.setup.llm.requests.length}|${this.setup.slack.calls.length}|${this.linesSeen}|${this.lives.length}|${this.clicksSent}`;
      if (current !== signature) {
        signature = current;
        lastProgressAt = now;
      } else if (
        now - lastProgressAt > IDLE_MS &&
        !this.killPending &&
        this.inflight.size === 0 &&
        this.continues < MAX_CONTINUES
      ) {
        await this.sayContinue();
        lastProgressAt = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    await Promise.allSettled([...this.inflight]);
  }

  /** The final text reached the thread, and its message is complete (a stream was stopped). */
  private finished(): boolean {
    return this.thread().some(
      (m) =>
        m.user === SLACK_IDS.botUserId &&
        m.text.includes(FINAL_TEXT) &&
        (m.stream === undefined || m.stream.state === 'stopped'),
    );
  }

  /** New Approve buttons, cards that turned Done; click what this life has not clicked yet. */
  private watchThread(): void {
    const life = this.life;
    for (const message of this.thread()) {
      if (message.user !== SLACK_IDS.botUserId) continue;
      const step = /run_shell echo step-(\d+) /.exec(message.text)?.[1];
      if (message.text.startsWith('Done:') && step !== undefined)
        this.stepFinished(Number(step), 'its card shows Done');
      for (const button of approveButtons(message)) {
        if (this.buttons.has(button.value)) continue;
        this.buttons.set(button.value, {
          ...button,
          ts: message.ts,
          step: step === undefined ? undefined : Number(step),
        });
        life.newCards++;
        this.note(`Approve shows for step ${step}`);
        if (this.maybeKill('card', life.newCards, `Approve card #${life.newCards} of the life showed (not clicked)`))
          life.clicked.add(button.value);
      }
    }
    for (const button of this.buttons.values()) {
      if (life.clicked.has(button.value) || !life.bot.alive) continue;
      life.clicked.add(button.value);
      this.click(button);
    }
  }

  private click(button: ApproveButton): void {
    const life = this.life;
    const click = ++this.clicksSent;
    life.clicks++;
    // Slack sends the message as it is when clicked.
    const message = this.setup.slack.message(C, button.ts);
    const payload = blockActions({
      actionId: button.actionId,
      value: button.value,
      messageTs: button.ts,
      threadTs: this.root,
      channel: C,
      responseUrl: this.setup.slack.responseUrl(`click-${click}`),
      messageText: message?.text ?? '',
      ...(message?.blocks ? { messageBlocks: message.blocks } : {}),
    });
    this.note(`click #${click}: Approve on step ${button.step} (life ${life.number})`);
    const sent = sendInteraction(life.bot.eventsUrl, SECRET, payload)
      .then(() => undefined)
      .catch((error: unknown) => {
        // The process died with the click in flight: Slack shows the user an error, and the
        // user clicks again after the restart.
        this.note(
          `click #${click} lost: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`,
        );
      })
      .finally(() => this.inflight.delete(sent));
    this.inflight.add(sent);
    this.maybeKill('click', life.clicks, `click #${life.clicks} of the life was sent`);
  }

  private async watchFile(): Promise<void> {
    const lines = await this.sideEffects();
    while (this.linesSeen < lines.length) {
      this.note(`chaos.txt gains "${lines[this.linesSeen]}"`);
      this.linesSeen++;
      this.life.lines++;
      this.maybeKill('command', this.life.lines, `command #${this.life.lines} of the life wrote its line`);
    }
  }

  private async sayContinue(): Promise<void> {
    const event = threadMessage({ text: 'continue', threadTs: this.root });
    this.setup.slack.addMessage(event);
    try {
      const response = await sendEvent(this.life.bot.eventsUrl, SECRET, eventCallback(event));
      this.continues++;
      this.note(`said "continue" (${response.status})`);
    } catch (error) {
      this.note(`"continue" not delivered: ${String(error)}`);
    }
  }

  /** The fake model got a request: count it, and maybe die partway through its stream. */
  private onModelRequest(messages: WireMessage[], steps: number[]): void {
    const life = this.life;
    life.requests++;
    this.note(
      `model request #${life.requests} of life ${life.number}: answers ${steps.length ? `steps ${steps.join(', ')}` : 'the final text'}`,
    );
    // A step's result can reach the model before its card turns Done in Slack.
    for (const [step, content] of resultsByStep(messages))
      if (!content.includes(INTERRUPTED_RESULT)) this.stepFinished(step, 'its result in the request');
    this.maybeKill('stream', life.requests, `model request #${life.requests} of the life`);
  }

  /**
   * A step's result is in (its card shows Done, or the model got its result, whichever is
   * seen first): "between calls" is just after this.
   */
  private stepFinished(step: number, how: string): void {
    if (this.finishedSteps.has(step)) return;
    this.finishedSteps.add(step);
    const life = this.life;
    life.finished++;
    this.note(`step ${step} finished (${how})`);
    this.maybeKill('between', life.finished, `step #${life.finished} of the life finished`);
  }

  /** When this is the moment the life's plan names, SIGKILL after the planned delay. */
  private maybeKill(phase: KillMoment['phase'], count: number, what: string): boolean {
    const life = this.life;
    const kill = life.kill;
    if (!kill || kill.phase !== phase || kill.nth !== count) return false;
    life.kill = undefined;
    this.killPending = true;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.note(`SIGKILL life ${life.number}: ${phase}, ${kill.delayMs} ms after ${what}`);
      life.killed = true;
      life.bot.killNow();
      this.killsFired++;
    }, kill.delayMs);
    this.timers.add(timer);
    return true;
  }
}

function approveButtons(message: StoredMessage): { value: string; actionId: string }[] {
  const blocks = (message.blocks ?? []) as {
    type?: string;
    elements?: { type?: string; action_id?: string; value?: string }[];
  }[];
  return blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements ?? [])
    .filter(
      (element) =>
        element.type === 'button' && element.action_id === 'agent_prompt:once' && element.value !== undefined,
    )
    .map((element) => ({ value: element.value!, actionId: element.action_id! }));
}
