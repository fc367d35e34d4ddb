// What one instance asks the owner of a session to do, in cluster mode. Every inbound action
// on a session (a message, a 🛑, the answer a click gave) becomes one of these, pushed on the session's
// durable command list (atomically with the event's de-duplication claim, before the
// platform is acknowledged), and the instance that owns the session applies them in order.
// They cross processes as JSON, so they are checked on the way in like any outside data.
import { z } from 'zod';
import { IncomingFileSchema, MessageSourceSchema } from '../engine/index.js';
import { SessionKeySchema } from '../store/session-store.js';

const RoutedCommandSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('deliver'),
    /** Also the pending input's id: a command applied twice (a crash between apply and consume) records one input. */
    id: z.string().min(1),
    key: SessionKeySchema,
    message: z.object({
      text: z.string(),
      userId: z.string(),
      source: MessageSourceSchema.optional(),
      external: z.boolean().optional(),
      attachments: z.array(IncomingFileSchema).optional(),
    }),
  }),
  z.object({ kind: z.literal('stop'), id: z.string().min(1), userId: z.string() }),
  /** A prompt was answered (the click's instance resolved it in the store): the owner's waiting turn goes on. */
  z.object({ kind: z.literal('resolved'), id: z.string().min(1), itemId: z.string(), toolCallId: z.string() }),
]);
export type RoutedCommand = z.infer<typeof RoutedCommandSchema>;

/** The command as stored: its JSON text is also what `consume` removes, so it is made once. */
export function encodeCommand(command: RoutedCommand): string {
  return JSON.stringify(command);
}

export function decodeCommand(raw: string): RoutedCommand | undefined {
  try {
    const parsed = RoutedCommandSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
