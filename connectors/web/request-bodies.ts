// What the page may send, parsed with zod before anything acts on it: the request bodies of
// the playground's actions. Anything else is refused with 400 and the reason.
import { z } from 'zod';
import { UPLOAD_ID } from './upload-staging.js';

/** Enough for any message a person types; a paste of a whole file still fits. */
const TEXT_MAX = 100_000;
const ID = z.string().min(1).max(200);

/** Upload ids a message may carry (the per-message cap, MAX_FILES_PER_MESSAGE, is the files room's: it names the rest in the thread). */
const FILES_MAX = 100;

/**
 * A message in the channel (no `thread`: a new root) or a reply in a thread, with the ids of
 * the files the page uploaded for it (upload-staging.ts). Text, files or both: a message made
 * only of files is a message.
 */
export const PostMessageBody = z
  .object({
    text: z.string().trim().max(TEXT_MAX).default(''),
    thread: ID.optional(),
    files: z.array(z.string().regex(UPLOAD_ID, 'not an upload id')).max(FILES_MAX).optional(),
  })
  .refine((body) => body.text.length > 0 || (body.files?.length ?? 0) > 0, {
    message: 'Write a message or attach a file.',
    path: ['text'],
  });
/** 🛑 on a thread. */
export const StopBody = z.object({ thread: ID });
/**
 * A button on a card, or in the expanded view Show all opened: the inbox item and one of its
 * choices; `view`, the proof the server handed out with that expanded view (web-inbound.ts).
 */
export const ClickBody = z.object({
  item: ID,
  choice: z.string().min(1).max(200),
  view: z.string().min(1).max(200).optional(),
});
/** Show all on a card: every character of the item's call, and the buttons to decide it. */
export const FullViewBody = z.object({ item: ID });
/** A card's "Full result" toggle: the whole result of its call, read from the transcript. */
export const ToolResultBody = z.object({ thread: ID, message: ID });
/** Retry / Continue on a note. */
export const NoteActionBody = z.object({ thread: ID, message: ID });

/** 👍 / 👎 under an answer: only the clicked message's id (the server finds the answer by it). */
export const FeedbackBody = z.object({ message: ID, value: z.enum(['up', 'down']) });
/** The optional reason for a 👎 (the feedback book keeps at most REASON_MAX characters of it). */
export const FeedbackReasonBody = z.object({
  message: ID,
  reason: z.string().trim().min(1, 'Write a reason, or leave the field empty.').max(2_000),
});

export type PostMessage = z.infer<typeof PostMessageBody>;
