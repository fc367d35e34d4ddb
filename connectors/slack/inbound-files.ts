// The files a Slack message shares, as the session layer takes them: each `files[]` object of
// an `app_mention` or a `message` (a `file_share`) becomes an IncomingFile, fetched later by
// the Slack file source (file-source.ts) when a turn takes the message, and only then: nothing
// here fetches, so a file from someone the door refuses is never downloaded.
//
// Slack's file objects come in several shapes, and not all can be downloaded as they come:
//   - `mode: 'tombstone'`: the file was deleted. Nothing to fetch and nothing lost: skipped.
//   - `file_access: 'check_file_info'` (Slack Connect: the event carries only the id),
//     `mode: 'hidden_by_limit'` (a free workspace's older file, without URLs), an external file
//     (`is_external`: a Google Drive link and the like), or no URL at all: passed on with an
//     empty `url`. The source asks files.info at fetch time, so what it then downloads, or the
//     reason it gives in the thread (hidden by the plan's limit, an external link), is Slack's
//     answer of that moment, and a person learns why a file they shared was not read.
// One malformed file object is skipped (and logged by its id only), not the whole message.
import { z } from 'zod';
import type { EngineLogger, IncomingFile } from '../../src/engine/index.js';

/** What a file's `url` is when the source must ask files.info for it first. */
export const LOOK_UP_WITH_FILES_INFO = '';

const SlackFileSchema = z.object({
  id: z.string().regex(/^F[A-Z0-9]+$/),
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  size: z.number().int().nonnegative().nullish(),
  mode: z.string().nullish(),
  is_external: z.boolean().nullish(),
  file_access: z.string().nullish(),
  url_private: z.string().nullish(),
  url_private_download: z.string().nullish(),
});

type SlackFile = z.infer<typeof SlackFileSchema>;

/** The files of one message, in the order Slack lists them (`files` as the event has it: anything). */
export function incomingFilesOf(files: unknown, logger: EngineLogger): IncomingFile[] {
  if (files === undefined || files === null) return [];
  if (!Array.isArray(files)) {
    logger.warn({ type: typeof files }, "skipped a Slack message's files: not a list");
    return [];
  }
  const incoming: IncomingFile[] = [];
  for (const raw of files as unknown[]) {
    const parsed = SlackFileSchema.safeParse(raw);
    if (!parsed.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      logger.warn(
        {
          file: typeof id === 'string' && /^F[A-Z0-9]+$/.test(id) ? id : 'unknown',
          problems: parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.')}: ${issue.message}`),
        },
        'skipped a malformed Slack file object',
      );
      continue;
    }
    const file = parsed.data;
    if (file.mode === 'tombstone') continue;
    incoming.push({
      platform: 'slack',
      id: file.id,
      // The name as shared; a file seen only by id (check_file_info) is named by files.info later.
      name: file.name || file.title || file.id,
      url: downloadable(file) ? (file.url_private_download || file.url_private)! : LOOK_UP_WITH_FILES_INFO,
      ...(file.mimetype ? { mimeType: file.mimetype } : {}),
      ...(typeof file.size === 'number' ? { size: file.size } : {}),
    });
  }
  return incoming;
}

/** A file whose event object is enough to download it; the others go through files.info. */
function downloadable(file: SlackFile): boolean {
  if (file.file_access === 'check_file_info') return false;
  if (file.mode === 'hidden_by_limit' || file.mode === 'external' || file.is_external) return false;
  return Boolean(file.url_private_download || file.url_private);
}
