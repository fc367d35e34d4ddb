// What the built-in demo model says (MODEL=demo; demo-provider.ts streams it). No AI: a
// script keyed on what the person wrote last, so a newcomer can see every part of the product
// without a key or a model server, and every run of it says the same thing.
//
// One idea: the reply is a pure function of the request, read from its end. A tool result
// last means the demo is answering its own call (say how it went, or take the next step);
// a user message last is what to answer, whether it started the turn or arrived mid-turn as
// steering (the engine appends a reply as a user message, so "the latest user message" is
// always the one to answer). Files shared with the message come first, then what the person
// asked for picks the scene (demo-asks.ts reads it: plain requests only, never one said in the
// negative):
//   files shared             say they are saved, and propose attach_file of the first (needs approval)
//   a steer of the last answer ("make it short", "as a list", "never mind"): follow it, and say so
//   file / note              propose write_file of a small note (needs approval)
//   shell, run a command, ls propose run_shell: `cat` of the note once written, else `ls -la`
//   long / story             a long answer streamed slowly: time to press Stop or to reply
//   anything else            what to try (the first message), or "You said: …" and what to try
import type { OutboundMessage } from '../engine/messages.js';
import type { ProviderRequest, ProviderToolCall } from '../engine/provider.js';
import { asksFor, isCommand, steerOf, type DemoSteer } from './demo-asks.js';

/**
 * The file the demo writes, relative to the workspace.
 * @internal
 */
export const DEMO_NOTE_PATH = 'demo-note.md';
/** @internal */
export const DEMO_NOTE_CONTENT = [
  '# A note from the demo model',
  '',
  'The playground wrote this file after you approved it on its card.',
  'It is in the workspace (WORKSPACE_DIR): the file tools cannot reach outside it.',
  '',
].join('\n');

/** How fast a reply streams: `slow` leaves time to press Stop or reply mid-answer. */
export type DemoPace = 'normal' | 'slow';

export interface DemoReply {
  text: string;
  toolCalls: ProviderToolCall[];
  pace: DemoPace;
}

const HOW_TO_SET_A_MODEL =
  'For real answers, stop the playground and set `MODEL` in `.env`: `openai:gpt-4.1` with `OPENAI_API_KEY`, `anthropic:claude-sonnet-4-6` with `ANTHROPIC_API_KEY`, or a local Ollama with `OPENAI_BASE_URL` (see the README).';

const WHAT_TO_TRY = [
  'Reply in this thread with one of these:',
  '',
  '- **file**: I write a small note in the workspace. It changes a file, so its card asks for your approval first.',
  '- **shell**: I run a command (`ls -la`, or `cat` of the note), after your approval too.',
  '- **long story**: a long answer, written slowly. Press **🛑 Stop** to cut it short, or reply while it is being written (say **make it short**, or **as a list**): your reply steers what I write next.',
  '- a file shared with your message (in the playground: 📎, or drop it on the page): I say where it was saved and post it back into the thread.',
  '- `/status` or `/help`: the thread commands, answered only to you.',
].join('\n');

const HELP = [
  'Hi! I am the **demo model**: scripted answers, no AI. I show what the bot does in a thread, and nothing leaves your machine.',
  '',
  WHAT_TO_TRY,
  '',
  HOW_TO_SET_A_MODEL,
].join('\n');

/** @internal */
export const DEMO_STORY = [
  'Once upon a time, in a workspace not far from here, there lived a small bot.',
  'Every morning it read the messages in its threads, one by one, and answered each as well as it could.',
  'When someone asked it to change a file, it asked first, and waited for a yes before it touched anything.',
  'One day a person wrote to it while it was still in the middle of a long answer.',
  'The bot did not forget the message: it finished its sentence, read the reply, and answered it right after.',
  'Another day a person pressed Stop, and the bot stopped at once, keeping what it had written so far.',
  'And so it went on answering, one message at a time, for as long as anyone wanted to talk.',
  '',
  'The end. (That was the long answer: next time, press **🛑 Stop** halfway, or reply while it is being written.)',
].join(' ');

/**
 * The story, as the steer "make it short" asks for it.
 * @internal
 */
export const DEMO_STORY_SHORT =
  'A small bot answered every message in its threads, asked before it changed anything, took replies as they came and stopped when told. The end.';

/** What the demo says after a steer it follows, and the steers it knows (for the quote-back). */
const KNOWN_STEERS = 'While I write, a reply steers me: try **make it short**, **as a list** or **never mind**.';

/**
 * The lists the files room adds to a user turn (src/files/user-turn.ts): the files saved, and
 * those that did not come through. The person's own words are read without them (the word
 * "Files" in a list is not a request for the note), and the saved files' paths are read from
 * the first.
 */
const FILE_LISTS = /\[Files shared with this message[^\n]*:\n[\s\S]*?\n\]/g;
const SAVED_FILES = /\[Files shared with this message, saved in your workspace:\n([\s\S]*?)\n\]/;

/** What the demo model answers to this request. */
export function demoReply(request: ProviderRequest): DemoReply {
  const messages = request.messages.filter((message) => message.role !== 'system');
  const last = messages.at(-1);
  if (last?.role === 'tool') return afterTools(request, messages);
  const turn = last?.role === 'user' ? userText(last.content) : '';
  const said = turn.replace(FILE_LISTS, ' ').trim();
  if (isSummaryRequest(request, said)) return say(summaryOf(said));
  const firstMessage = messages.filter((message) => message.role === 'user').length <= 1;
  const offered = new Set(request.tools.map((tool) => tool.name));

  // Files shared: the demo cannot read them, but it can show the way back out (attach_file).
  const shared = savedPaths(turn);
  if (shared.length > 0) {
    const listed = shared.map((path) => `\`${path}\``).join(', ');
    const intro = `You shared ${listed}: ${shared.length === 1 ? 'it is' : 'they are'} saved in the workspace. I am only the demo model, so I cannot read ${shared.length === 1 ? 'it' : 'them'}; a real model would.`;
    if (!offered.has('attach_file')) return say(`${intro}\n\n${WHAT_TO_TRY}`);
    return {
      text: `${intro} To show how the bot hands a file back, I will post \`${shared[0]}\` into this thread with attach_file: its card asks you first.`,
      toolCalls: [
        {
          id: callId(messages, 'attach'),
          name: 'attach_file',
          arguments: JSON.stringify({ path: shared[0], comment: 'Your file, back from the demo model.' }),
        },
      ],
      pace: 'normal',
    };
  }

  // A reply about the last answer: followed, visibly (a reply sent mid-answer is taken right after it).
  const steer = steerOf(said);
  const previous = steer ? lastAnswer(messages) : undefined;
  if (steer && previous) return followSteer(steer, said, previous);

  if (asksFor(said, 'file') && !isCommand(said)) {
    if (!offered.has('write_file')) return say(unavailable('write_file'));
    return {
      text: `Sure: I will write a short note to \`${DEMO_NOTE_PATH}\` in the workspace. It changes a file, so the card below asks for your approval first.`,
      toolCalls: [
        {
          id: callId(messages, 'write'),
          name: 'write_file',
          arguments: JSON.stringify({ path: DEMO_NOTE_PATH, content: DEMO_NOTE_CONTENT }),
        },
      ],
      pace: 'normal',
    };
  }
  if (asksFor(said, 'shell')) return proposeCommand(messages, offered);
  if (asksFor(said, 'story')) return { text: DEMO_STORY, toolCalls: [], pace: 'slow' };
  if (firstMessage || !said) return say(HELP);
  // Any other message, a reply that steered a running turn included, is quoted back: the
  // person sees that the latest thing they wrote is the one answered.
  return say(
    `You said: “${clip(said, 120)}”. I am only the demo model: I know a few scripted answers, no more. ${KNOWN_STEERS}\n\n${WHAT_TO_TRY}`,
  );
}

/** The last answer, redone as the steer asks: what a real model does with "make it short". */
function followSteer(steer: DemoSteer, said: string, previous: string): DemoReply {
  const quoted = `(“${clip(said, 80)}”)`;
  switch (steer) {
    case 'cancel':
      return say('OK, I will leave it there. What next? Try **file**, **shell** or **long story**.');
    case 'shorter': {
      const short = previous.startsWith(DEMO_STORY.slice(0, 40))
        ? DEMO_STORY_SHORT
        : (sentencesOf(previous)[0] ?? clip(previous, 160));
      return say(`Short version, as you asked ${quoted}:\n\n${short}`);
    }
    case 'list': {
      const points = sentencesOf(previous)
        .slice(0, 12)
        .map((sentence) => `- ${sentence}`);
      return say(`As a list, as you asked ${quoted}:\n\n${points.join('\n')}`);
    }
  }
}

/** The text of the demo's last answer before the latest user message (a proposal's words count). */
function lastAnswer(messages: OutboundMessage[]): string | undefined {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]!.role === 'user') at--;
  for (; at >= 0; at--) {
    const message = messages[at]!;
    if (message.role === 'user') return undefined;
    if (message.role === 'assistant' && typeof message.content === 'string' && message.content.trim())
      return message.content;
  }
  return undefined;
}

/** An answer's prose in sentences, its marks and code left out: what a short or listed version is made of. */
function sentencesOf(text: string): string[] {
  const prose = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/^\s*(?:[-*]|#+|\d+\.)\s+/gm, '')
    .replace(/\*\*|`/g, '')
    .replace(/\s*\([^()]*\)/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return (prose.match(/[^.!?]+(?:[.!?]+|$)/g) ?? [])
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 1);
}

/** The last round of calls got its results: say how it went, or take the next step. */
function afterTools(request: ProviderRequest, messages: OutboundMessage[]): DemoReply {
  const results = new Map<string, string>();
  let at = messages.length - 1;
  for (; at >= 0; at--) {
    const message = messages[at]!;
    if (message.role !== 'tool') break;
    results.set(message.tool_call_id, message.content);
  }
  const round = messages[at];
  const calls = round?.role === 'assistant' ? (round.tool_calls ?? []) : [];
  const lines: string[] = [];
  let next: DemoReply | undefined;
  for (const call of calls) {
    const outcome = parseResult(results.get(call.id));
    const name = call.function.name;
    if ('refused' in outcome) {
      lines.push(
        /denied/i.test(outcome.refused)
          ? `You denied **${name}**, so it did not run: nothing was changed.`
          : `**${name}** did not run: ${outcome.refused}`,
      );
      continue;
    }
    if (name === 'write_file') {
      lines.push(`Done: I wrote \`${DEMO_NOTE_PATH}\` in the workspace.`);
      // "write a note and show it with a command": the second step follows the first.
      const asked = lastUserText(messages);
      if (asksFor(asked, 'shell')) next = proposeCommand(messages, new Set(request.tools.map((tool) => tool.name)));
      else lines.push('Say **shell** and I will show it with `cat`, after your approval again.');
    } else if (name === 'attach_file') {
      lines.push('Posted: the file is in the thread above, with a link that downloads it.');
    } else if (name === 'run_shell') {
      const output = typeof outcome.value.output === 'string' ? outcome.value.output.trimEnd() : '';
      const exit = typeof outcome.value.exitCode === 'number' ? ` (exit code ${outcome.value.exitCode})` : '';
      lines.push(
        output
          ? `The command printed${exit}:\n\n${fenced(clipLines(output, 30))}`
          : `The command ran${exit} and printed nothing.`,
      );
    } else {
      lines.push(`**${name}** ran.`);
    }
  }
  if (next) return { ...next, text: `${lines.join('\n\n')} ${next.text}` };
  if (lines.length === 0) lines.push('Nothing ran.');
  return say(`${lines.join('\n\n')}\n\nWhat next? Try **file**, **shell** or **long story**.`);
}

function proposeCommand(messages: OutboundMessage[], offered: ReadonlySet<string>): DemoReply {
  if (!offered.has('run_shell')) return say(unavailable('run_shell'));
  const command = noteWritten(messages) ? `cat ${DEMO_NOTE_PATH}` : 'ls -la';
  return {
    text: `I will run \`${command}\` in the workspace. Commands can do anything, so this one waits for your approval on its card.`,
    toolCalls: [{ id: callId(messages, 'shell'), name: 'run_shell', arguments: JSON.stringify({ command }) }],
    pace: 'normal',
  };
}

function unavailable(tool: 'write_file' | 'run_shell'): string {
  const why =
    tool === 'run_shell'
      ? 'commands are not offered in this setup: the shell runs only in a sandbox (bubblewrap) unless SHELL_SANDBOX=off, or DISABLED_TOOLS turned it off'
      : 'writing files is not offered in this setup (DISABLED_TOOLS turned it off)';
  return `I would use **${tool}** here, but ${why}. Try **long story** instead.`;
}

/** Whether an earlier call of this conversation wrote the note (and was not refused). */
function noteWritten(messages: OutboundMessage[]): boolean {
  const writes = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? [])
        if (call.function.name === 'write_file' && call.function.arguments.includes(DEMO_NOTE_PATH))
          writes.add(call.id);
    } else if (
      message.role === 'tool' &&
      writes.has(message.tool_call_id) &&
      !('refused' in parseResult(message.content))
    ) {
      return true;
    }
  }
  return false;
}

/** A tool result as the engine wrote it: the tool's JSON, or `{ error: 'tool call not executed', reason }`. */
function parseResult(content: string | undefined): { value: Record<string, unknown> } | { refused: string } {
  if (content === undefined) return { refused: 'it has no result' };
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return { value: { output: content } };
  }
  if (typeof value !== 'object' || value === null) return { value: { output: String(value) } };
  const record = value as Record<string, unknown>;
  if (record.error === 'tool call not executed')
    return { refused: typeof record.reason === 'string' ? record.reason : 'it was not executed' };
  return { value: record };
}

/**
 * The compactor's summary call (summary-compactor.ts): no tools, one user message holding the
 * transcript. The demo cannot summarise; it keeps the user messages, which the summary must
 * never drop, and says that is all it is.
 */
function isSummaryRequest(request: ProviderRequest, said: string): boolean {
  return request.tools.length === 0 && /^<(conversation|previous-summary)>/.test(said);
}

function summaryOf(transcript: string): string {
  const userLines = transcript
    .split('\n')
    .filter((line) => line.startsWith('USER: '))
    .map((line) => `- ${clip(line.slice(6), 200)}`);
  return [
    '## Goals and constraints',
    'A conversation with the demo model (scripted answers, no AI).',
    '## User messages',
    ...(userLines.length > 0 ? userLines : ['- (none)']),
  ].join('\n');
}

/** The paths of the files a user turn says were saved (each list line starts `- <path> ("<name>"; …`). */
function savedPaths(turn: string): string[] {
  const list = SAVED_FILES.exec(turn)?.[1] ?? '';
  return [...list.matchAll(/^- (.+?) \("/gm)].map((match) => match[1]!);
}

function say(text: string): DemoReply {
  return { text, toolCalls: [], pace: 'normal' };
}

function lastUserText(messages: OutboundMessage[]): string {
  for (let at = messages.length - 1; at >= 0; at--) {
    const message = messages[at]!;
    if (message.role === 'user') return userText(message.content);
  }
  return '';
}

/** A user message's text, without the per-call `<system-context>` block the engine appends (outbound.ts). */
function userText(content: Extract<OutboundMessage, { role: 'user' }>['content']): string {
  const text =
    typeof content === 'string'
      ? content
      : content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  return text.replace(/\s*<system-context>[\s\S]*?<\/system-context>\s*/g, ' ').trim();
}

/** A call id of its own per model call of the conversation (the engine makes ids unique anyway). */
function callId(messages: OutboundMessage[], what: string): string {
  return `demo_${what}_${messages.filter((message) => message.role === 'assistant').length + 1}`;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function clipLines(text: string, max: number): string {
  const lines = text.split('\n');
  return lines.length > max ? [...lines.slice(0, max), `… ${lines.length - max} more lines`].join('\n') : text;
}

/** A code block that the output itself cannot close: its fence is longer than any run of backticks in it. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}
