// What the page may send, parsed with zod before anything acts on it: the request bodies of
// the playground's four actions. Anything else is refused with 400 and the reason.
import { z } from 'zod';

/** Enough for any message a person types; a paste of a whole file still fits. */
const TEXT_MAX = 100_000;
const ID = z.string().min(1).max(200);

/** A message in the channel (no `thread`: a new root) or a reply in a thread. */
export const PostMessageBody = z.object({ text: z.string().trim().min(1).max(TEXT_MAX), thread: ID.optional() });
/** 🛑 on a thread. */
export const StopBody = z.object({ thread: ID });
/** A button on a card: the inbox item and one of its choices. */
export const ClickBody = z.object({ item: ID, choice: z.string().min(1).max(200) });
/** Retry / Continue on a note. */
export const NoteActionBody = z.object({ thread: ID, message: ID });

export type PostMessage = z.infer<typeof PostMessageBody>;
