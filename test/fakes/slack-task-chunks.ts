// The fake Slack's view of tasks and plans (slack-server.ts calls these): stream `chunks` of
// chat.startStream / appendStream / stopStream and the `plan` / `task_card` blocks of
// chat.postMessage / update, checked as Slack checks them and refused with its errors, and
// the tasks a streamed message shows, kept as Slack keeps them.
//
// What Slack does, and so this does: a task_update's status is one of pending, in_progress,
// complete, error (`completed` is refused); its `details` and `output` are at most 256
// characters; a repeated task_update for the same id changes the task in place, and the
// `details` it carries are APPENDED to what the task shows (so a bot that sends them twice
// shows them twice, which a test can see). A plan holds at most 50 task cards; `plan` and
// `task_card` blocks are never mixed in one message.

const TASK_STATUSES: readonly string[] = ['pending', 'in_progress', 'complete', 'error'];
const TASK_TEXT_MAX = 256;
const PLAN_TASKS_MAX = 50;
const DISPLAY_MODES: readonly string[] = ['timeline', 'plan'];

/** One task as a streamed message shows it. */
export interface FakeTask {
  id: string;
  title: string;
  status: string;
  /** Everything sent as details, appended in arrival order (Slack's behaviour). */
  details?: string;
  output?: string;
  /** How many task_update chunks touched it. */
  updates: number;
  /** How many of them carried details (more than one is a bug the bot must not have). */
  detailsSent: number;
  /** Every status it was given, in order. */
  statuses: string[];
}

/** Slack's error for a call's `chunks` (and `task_display_mode`), or undefined when they are valid. */
export function chunksProblem(args: Record<string, unknown>): string | undefined {
  const mode = args.task_display_mode;
  if (mode !== undefined && (typeof mode !== 'string' || !DISPLAY_MODES.includes(mode))) return 'invalid_arguments';
  const chunks = args.chunks;
  if (chunks === undefined) return undefined;
  if (!Array.isArray(chunks) || chunks.length === 0) return 'invalid_chunks';
  for (const chunk of chunks as unknown[]) {
    if (!chunk || typeof chunk !== 'object') return 'invalid_chunks';
    const c = chunk as Record<string, unknown>;
    switch (c.type) {
      case 'markdown_text':
        if (typeof c.text !== 'string' || c.text.length > 12_000) return 'invalid_chunks';
        break;
      case 'plan_update':
        if (!nonEmpty(c.title)) return 'invalid_chunks';
        break;
      case 'task_update':
        if (!nonEmpty(c.id) || !nonEmpty(c.title)) return 'invalid_chunks';
        if (typeof c.status !== 'string' || !TASK_STATUSES.includes(c.status)) return 'invalid_chunks';
        for (const field of ['details', 'output'] as const) {
          const value = c[field];
          if (value !== undefined && (typeof value !== 'string' || value.length > TASK_TEXT_MAX))
            return 'invalid_chunks';
        }
        break;
      case 'blocks':
        if (!Array.isArray(c.blocks) || c.blocks.length > 50) return 'invalid_chunks';
        break;
      default:
        return 'invalid_chunks';
    }
  }
  return undefined;
}

/** Bring a streamed message's tasks up to date with the chunks Slack accepted (in order). */
export function applyTaskChunks(tasks: FakeTask[], chunks: readonly unknown[]): void {
  for (const chunk of chunks) {
    const c = chunk as {
      type?: unknown;
      id?: string;
      title?: string;
      status?: string;
      details?: string;
      output?: string;
    };
    if (c.type !== 'task_update' || !c.id) continue;
    let task = tasks.find((t) => t.id === c.id);
    if (!task) {
      task = {
        id: c.id,
        title: c.title ?? '',
        status: c.status ?? 'pending',
        updates: 0,
        detailsSent: 0,
        statuses: [],
      };
      tasks.push(task);
    }
    task.updates += 1;
    if (c.title) task.title = c.title;
    if (c.status) {
      task.status = c.status;
      task.statuses.push(c.status);
    }
    if (c.details !== undefined) {
      task.details = (task.details ?? '') + c.details;
      task.detailsSent += 1;
    }
    if (c.output !== undefined) task.output = c.output;
  }
}

/** Slack's error for a message's `plan` / `task_card` blocks, or undefined when they are valid. */
export function taskBlocksProblem(blocks: readonly unknown[] | undefined): string | undefined {
  if (!blocks) return undefined;
  const types = blocks.map((block) => (block as { type?: unknown } | null)?.type);
  if (types.includes('plan') && types.includes('task_card')) return 'invalid_blocks';
  for (const block of blocks) {
    const b = (block ?? {}) as Record<string, unknown>;
    if (b.type === 'task_card' && !validTaskCard(b)) return 'invalid_blocks';
    if (b.type === 'plan') {
      if (!nonEmpty(b.title)) return 'invalid_blocks';
      if (b.tasks !== undefined) {
        if (!Array.isArray(b.tasks) || b.tasks.length > PLAN_TASKS_MAX) return 'invalid_blocks';
        if (!(b.tasks as unknown[]).every((task) => validTaskCard((task ?? {}) as Record<string, unknown>)))
          return 'invalid_blocks';
      }
    }
  }
  return undefined;
}

/** The task cards a message's plan block shows, if it has one. */
export function planTasks(
  blocks: readonly unknown[] | undefined,
):
  | { title: string; tasks: { task_id: string; title: string; status: string; details?: unknown; output?: unknown }[] }
  | undefined {
  const plan = (blocks ?? []).find((block) => (block as { type?: unknown }).type === 'plan') as
    { title: string; tasks?: never[] } | undefined;
  return plan && { title: plan.title, tasks: plan.tasks ?? [] };
}

function validTaskCard(card: Record<string, unknown>): boolean {
  if (card.type !== 'task_card' || !nonEmpty(card.task_id) || !nonEmpty(card.title)) return false;
  if (typeof card.status !== 'string' || !TASK_STATUSES.includes(card.status)) return false;
  return [card.details, card.output].every((field) => field === undefined || isRichText(field));
}

/** One rich_text block (what a task card's details and output are), its text within the cap. */
function isRichText(value: unknown): boolean {
  const block = value as { type?: unknown; elements?: unknown } | null;
  if (block?.type !== 'rich_text' || !Array.isArray(block.elements)) return false;
  return JSON.stringify(block.elements).length <= 4 * TASK_TEXT_MAX;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
