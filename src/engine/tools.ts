// Tools as the engine sees them: a name, a zod schema for the arguments, metadata that
// decides how carefully the engine treats the call, and an execute function that gets an
// AbortSignal. A tool without metadata is treated as risky and not parallel-safe:
// unknown = careful.
import { z } from 'zod';
import type { ToolSchema } from './provider.js';

type RiskLevel = 'low' | 'medium' | 'high';

export interface ToolMetadata {
  risk: RiskLevel;
  /** Always ask a human, whatever the risk level says. */
  requiresApproval?: boolean;
  /** Safe to run again after a crash (reads). Used by restart recovery. */
  idempotent?: boolean;
  /** read / write / exec / external, or anything a policy understands. */
  category?: string;
  /**
   * Where the tool runs and what it can reach, in one sentence for its approval card
   * ("in a sandbox: the workspace only, no network"). A person approves knowing it.
   */
  confinement?: string;
}

/**
 * How a call that runs came to be allowed, as its tool is told (ToolContext.approval): a
 * person approved it when asked (`human`), the shell allow-list matched it (`allowlist`:
 * nobody looked at this command, so run_shell hardens git for it), or another rule of the
 * policy let it through (`policy`: a read, auto mode, a remembered "always" grant).
 */
export type ApprovalVia = 'human' | 'allowlist' | 'policy';

export interface CallApproval {
  via: ApprovalVia;
  /** `human`: who answered the card, when the approver said (a tool acting for someone acts for them). */
  by?: string;
}

export interface ToolContext {
  /** Fires when the user stops the turn. A tool that ignores it is not waited for. */
  signal: AbortSignal;
  toolCallId: string;
  sessionId: string;
  /** How the engine came to run this call (who or what allowed it); absent outside the engine. */
  approval?: CallApproval;
  /**
   * The person whose message the turn answers (the latest user message that names one), so a
   * tool that acts for someone (schedule_task) knows who; absent outside the engine or when no
   * message named a person.
   */
  requester?: string;
}

/** A tool's answer. A `_display` key on an object result is lifted off for the user only. */
export type ToolResult = string | Record<string, unknown> | unknown[] | number | boolean | null;

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: Schema;
  metadata?: ToolMetadata;
  /**
   * What an approval card shows for a call, when the arguments alone would not let a person
   * see what they approve (attach_file: the file's name, size, type and first lines). Must
   * not throw; the model's arguments are shown when it returns undefined.
   */
  shownArguments?: (args: z.output<Schema>) => Record<string, unknown> | undefined;
  /** For shell-like tools: the command an `always_command` grant remembers. */
  commandOf?: (args: z.output<Schema>) => string | undefined;
  execute(args: z.output<Schema>, context: ToolContext): Promise<ToolResult>;
}

/** Helper that keeps the schema and execute's argument type tied together. */
export function defineTool<Schema extends z.ZodType>(definition: ToolDefinition<Schema>): ToolDefinition {
  return definition;
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private schemaCache: ToolSchema[] | null = null;

  constructor(tools: Iterable<ToolDefinition> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: ToolDefinition): void {
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is registered twice`);
    this.tools.set(tool.name, tool);
    this.schemaCache = null;
  }

  unregister(name: string): void {
    this.tools.delete(name);
    this.schemaCache = null;
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** JSON schemas for the provider, converted once: they are sent on every model call. */
  schemas(): ToolSchema[] {
    this.schemaCache ??= [...this.tools.values()].map(toolSchemaOf);
    return this.schemaCache;
  }
}

/**
 * Each argument schema's JSON Schema, converted once per schema object. Every session builds
 * its own tools and registry, but over the same schemas (module constants), and converting
 * them was most of what a new session allocated: 1,000 threads started at once converted the
 * same seven schemas 1,000 times. Shared, so never to be changed.
 */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

export function toolSchemaOf(tool: Pick<ToolDefinition, 'name' | 'description' | 'schema'>): ToolSchema {
  let parameters = jsonSchemas.get(tool.schema);
  if (!parameters) {
    parameters = z.toJSONSchema(tool.schema, { io: 'input' });
    delete parameters.$schema;
    jsonSchemas.set(tool.schema, parameters);
  }
  return { name: tool.name, description: tool.description, parameters };
}

/** Low-risk tools that never ask may share the stage with their neighbours. */
export function isParallelSafe(tool: ToolDefinition | undefined): boolean {
  return tool?.metadata?.risk === 'low' && tool.metadata.requiresApproval !== true;
}

/** A tool result as history stores it: text for the model, plus the display sidecar. */
export interface RecordedResult {
  content: string;
  display?: unknown;
}

export function recordResult(result: ToolResult): RecordedResult {
  if (typeof result === 'string') return { content: result };
  if (result !== null && typeof result === 'object' && !Array.isArray(result) && '_display' in result) {
    // A `_display` key is user-facing metadata the model must never see (e.g. how many
    // results a privacy filter hid: a count the model could probe around).
    const { _display: display, ...rest } = result;
    return { content: JSON.stringify(rest), display };
  }
  return { content: JSON.stringify(result) ?? 'null' };
}
