// The three tools the engine answers itself: `ask_user`, `propose_plan`,
// `request_directory`. Each one asks a human, and the human's answer is itself the consent,
// so they skip the permission path. Connectors answer them through injected async callbacks;
// without a callback the model gets a clear "not available here" error.
import { z } from 'zod';
import type { InteractionKind } from './events.js';
import type { InboxResolution } from './inbox.js';
import { toolSchemaOf } from './tools.js';
import type { ToolSchema } from './provider.js';

interface InteractiveRequestBase {
  toolCallId: string;
  sessionId: string;
  /** Aborted when the turn is stopped: close the prompt, a later answer is a no-op. */
  signal: AbortSignal;
}

const AskUserArgs = z.object({
  question: z.string().min(1).describe('The question, in one or two sentences.'),
  options: z.array(z.string().min(1)).max(10).optional().describe('Suggested answers the user can pick with a click.'),
});
const ProposePlanArgs = z.object({
  plan: z.string().min(1).describe('The plan, as a short numbered list in markdown.'),
});
const RequestDirectoryArgs = z.object({
  path: z.string().min(1).describe('The directory you need access to.'),
  reason: z.string().min(1).describe('Why you need it.'),
  writable: z.boolean().optional().describe('Whether you need to write there.'),
});

interface AskUserAnswer {
  answer: string;
}
interface PlanDecision {
  approved: boolean;
  feedback?: string;
}
export interface DirectoryDecision {
  granted: boolean;
  path?: string;
}

export interface InteractiveCallbacks {
  askUser?: (request: z.output<typeof AskUserArgs> & InteractiveRequestBase) => Promise<AskUserAnswer>;
  proposePlan?: (request: z.output<typeof ProposePlanArgs> & InteractiveRequestBase) => Promise<PlanDecision>;
  requestDirectory?: (
    request: z.output<typeof RequestDirectoryArgs> & InteractiveRequestBase,
  ) => Promise<DirectoryDecision>;
  /** Why a folder could never be granted (the bot's own files, `/`), or null: nobody is asked then. */
  directoryRefusal?: (path: string) => string | null;
  /**
   * What the person is shown for a grantable folder: its real path (what is granted, not the
   * model's spelling) and what the tools could do there. Undefined: shown as the model wrote it.
   */
  directoryPreview?: (path: string) => DirectoryPreview | undefined;
  /**
   * Make a grant a person gave while no request waited for it (the answer was stored across a
   * restart): the same checks and effect as a grant given live. Without it, such an answer
   * would tell the model "granted" while the tools could not reach the folder.
   */
  grantAnswered?: (path: string) => Promise<DirectoryDecision>;
}

interface DirectoryPreview {
  /** The folder's real path. */
  path: string;
  /** Whether it becomes writable, and for which tools, in words (the card's "Access"). */
  access: string;
}

interface InteractiveSpec {
  kind: InteractionKind;
  description: string;
  schema: z.ZodObject;
  available(callbacks: InteractiveCallbacks): boolean;
  ask(callbacks: InteractiveCallbacks, args: Record<string, unknown>, base: InteractiveRequestBase): Promise<unknown>;
  /** An answer given without asking anyone, when the request could never be granted. */
  refuse?(callbacks: InteractiveCallbacks, args: Record<string, unknown>): unknown;
  /** The arguments as the person is shown them and the request is made, when not as the model wrote them. */
  shown?(callbacks: InteractiveCallbacks, args: Record<string, unknown>): Record<string, unknown>;
  /** A stored answer (given while nothing waited) made to take effect; `args` as shown. */
  settle?(callbacks: InteractiveCallbacks, args: Record<string, unknown>, answer: unknown): Promise<unknown>;
  /** An answer stored in the inbox, as the tool result the model reads. */
  fromResolution(resolution: InboxResolution): unknown;
}

export const INTERACTIVE_TOOLS: Record<string, InteractiveSpec> = {
  ask_user: {
    kind: 'question',
    description: 'Ask the user a question and wait for the answer. Use it when you cannot proceed without their input.',
    schema: AskUserArgs,
    available: (c) => c.askUser !== undefined,
    ask: (c, args, base) => c.askUser!({ ...(args as z.output<typeof AskUserArgs>), ...base }),
    fromResolution: (r) => (r.kind === 'question' ? { answer: r.answer } : undefined),
  },
  propose_plan: {
    kind: 'plan',
    description: 'Propose a plan to the user and wait for approval before doing the work.',
    schema: ProposePlanArgs,
    available: (c) => c.proposePlan !== undefined,
    ask: (c, args, base) => c.proposePlan!({ ...(args as z.output<typeof ProposePlanArgs>), ...base }),
    fromResolution: (r) => (r.kind === 'plan' ? { approved: r.approved, feedback: r.feedback } : undefined),
  },
  request_directory: {
    kind: 'directory',
    description: 'Ask the user for access to a directory outside your workspace.',
    schema: RequestDirectoryArgs,
    available: (c) => c.requestDirectory !== undefined,
    ask: (c, args, base) => c.requestDirectory!({ ...(args as z.output<typeof RequestDirectoryArgs>), ...base }),
    refuse: (c, args) => {
      const { path } = args as z.output<typeof RequestDirectoryArgs>;
      const reason = c.directoryRefusal?.(path);
      return reason ? { granted: false, path: `${path} (${reason})` } : undefined;
    },
    // The real path is asked for and granted: a link the model named cannot lead elsewhere
    // than the card said. `writable` (the model's wish) gives way to what access really is.
    shown: (c, args) => {
      const { path, reason } = args as z.output<typeof RequestDirectoryArgs>;
      const preview = c.directoryPreview?.(path);
      return preview ? { path: preview.path, reason, access: preview.access } : args;
    },
    settle: async (c, args, answer) => {
      const decision = answer as DirectoryDecision;
      if (!decision.granted || !c.grantAnswered) return answer;
      return c.grantAnswered((args as z.output<typeof RequestDirectoryArgs>).path);
    },
    fromResolution: (r) => (r.kind === 'directory' ? { granted: r.granted, path: r.path } : undefined),
  },
};

export function isInteractiveTool(name: string): boolean {
  return Object.hasOwn(INTERACTIVE_TOOLS, name);
}

/** Only the interactive tools this surface can answer are offered to the model. */
export function interactiveToolSchemas(callbacks: InteractiveCallbacks): ToolSchema[] {
  return Object.entries(INTERACTIVE_TOOLS)
    .filter(([, spec]) => spec.available(callbacks))
    .map(([name, spec]) => toolSchemaOf({ name, description: spec.description, schema: spec.schema }));
}
