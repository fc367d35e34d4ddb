// What a Slack button carries. Buttons are stateless: the action id names the kind of
// click and the value holds only ids, so a card posted before a restart still works after
// it (nothing about the click lives in memory). Slack limits: action_id ≤ 255 characters,
// value ≤ 2,000.
import { z } from 'zod';

export const PROMPT_ACTION = 'agent_prompt';
export const RETRY_ACTION = 'agent_retry';
/** "Show all" on a card whose call is too long to show in full: opens a modal with all of it. */
export const SHOW_ALL_ACTION = 'agent_show_all';
/**
 * 👍 / 👎 under a final answer (feedback-blocks.ts). Routed by its own listener
 * (feedback-clicks.ts), not by ACTION_PATTERN: its click is a `feedback_buttons` action and
 * may open a modal, which the card buttons' listener knows nothing of.
 */
export const FEEDBACK_ACTION = 'agent_feedback';
/** Every card button's action id starts with this, so one listener routes them all. */
export const ACTION_PATTERN = /^agent_(prompt|retry|show_all)(:.*)?$/;

export const PromptValueSchema = z.object({ item: z.string().min(1), choice: z.string().min(1) });
export type PromptValue = z.infer<typeof PromptValueSchema>;

export const SessionValueSchema = z.object({ session: z.string().min(1) });
export type SessionValue = z.infer<typeof SessionValueSchema>;

/**
 * The tool call a "Show all" button is about. Only a cross-check: the click handler finds the
 * call from the message clicked (its stored reference), never from this value alone.
 */
export const CallValueSchema = z.object({ call: z.string().min(1) });
export type CallValue = z.infer<typeof CallValueSchema>;

/** Slack wants action ids unique within a message: suffix the choice. */
export function promptActionId(choice: string): string {
  return `${PROMPT_ACTION}:${choice}`.slice(0, 255);
}

export function encodeValue(value: PromptValue | SessionValue | CallValue): string {
  const text = JSON.stringify(value);
  if (text.length > 2000) throw new Error("button value over Slack's 2,000-character limit");
  return text;
}

export function decodeValue<T>(schema: z.ZodType<T>, raw: string | undefined): T | undefined {
  if (!raw) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
