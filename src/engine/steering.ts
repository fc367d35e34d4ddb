// Steering: messages a person sends while a turn runs. They are queued, never dropped, and
// injected as user messages at the turn's next safe point (after a tool round, or when the
// model answers without tools), so they redirect the running turn instead of starting one.
import type { EngineEvent } from './events.js';
import type { History } from './history.js';
import type { IncomingFile, Message, MessageSource, UserContent } from './messages.js';

export interface SteeringMessage {
  id: string;
  text: string;
  source?: MessageSource;
  /** Files shared with it, fetched as it is injected (see `InputPreparer`). */
  attachments?: IncomingFile[];
}

/**
 * Turns a person's message and the files it carries into the user content the transcript
 * keeps (references to the fetched files, never their bytes), and lists what did not come
 * through (a failed download, a cap) for the thread. The app's files room implements it
 * (src/files/); without one, files are named in the text and not fetched. `source` says who
 * shared them (heavy work on files takes turns between people).
 */
export type InputPreparer = (
  input: { text: string; attachments: IncomingFile[]; source?: MessageSource },
  signal: AbortSignal,
) => Promise<PreparedInput>;
export interface PreparedInput {
  content: UserContent;
  /** One line per file that did not reach the model in full, for the thread's note. */
  problems: string[];
}

/** A message's content when nothing fetches its files: the text, and each file's name so the model knows one was shared. */
export async function contentWithoutFiles(input: {
  text: string;
  attachments: IncomingFile[];
}): Promise<PreparedInput> {
  if (input.attachments.length === 0) return { content: input.text, problems: [] };
  const names = input.attachments.map((file) => file.name).join(', ');
  return {
    content: `${input.text}\n\n[Files were shared but this bot does not fetch files: ${names}]`.trim(),
    problems: input.attachments.map((file) => `${file.name}: not fetched (files are not set up)`),
  };
}

export interface SteeringReceipt {
  id: string;
  /**
   * `running`: a turn is running and will take it at its next safe point (or, if it is
   * already finishing, leave it in `takePendingSteering()` when its event stream ends).
   * `idle`: no turn is running; it waits in `takePendingSteering()` for the caller to
   * start one.
   */
  state: 'running' | 'idle';
}

export class SteeringQueue {
  private readonly queued: SteeringMessage[] = [];

  get size(): number {
    return this.queued.length;
  }

  push(steer: SteeringMessage): void {
    this.queued.push(steer);
  }

  has(id: string): boolean {
    return this.queued.some((steer) => steer.id === id);
  }

  ids(): string[] {
    return this.queued.map((steer) => steer.id);
  }

  takeAll(): SteeringMessage[] {
    return this.queued.splice(0, this.queued.length);
  }

  /** Append every queued message to history, in order, each announced as it lands (its files fetched first). */
  async *inject(
    history: History,
    prepare: InputPreparer,
    signal: AbortSignal,
  ): AsyncGenerator<EngineEvent, void, undefined> {
    while (this.queued.length > 0) {
      const steer = this.queued.shift()!;
      const prepared = steer.attachments?.length
        ? await prepare(
            { text: steer.text, attachments: steer.attachments, ...(steer.source ? { source: steer.source } : {}) },
            signal,
          )
        : undefined;
      const message: Message = { role: 'user', content: prepared?.content ?? steer.text, ts: Date.now() };
      if (steer.source) message.source = steer.source;
      await history.append(message);
      const event: EngineEvent = { type: 'steering_injected', id: steer.id, text: steer.text };
      if (steer.source) event.source = steer.source;
      yield event;
      if (prepared && prepared.problems.length > 0) yield { type: 'input_files', problems: prepared.problems };
    }
  }
}
