// Each conversation's folder: where the folders live, how much one may hold, who shares one, which
// other folders may be granted, and the files shared in a thread, saved in its uploads/ folder.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { positiveInt } from './setting-values.js';

export const workspaceSettings = {
  WORKSPACE_DIR: z
    .string()
    .min(1)
    .default('./workspace')
    .register(settingDocs, {
      section: 'Workspaces',
      description:
        'the folder the file and shell tools work in: each conversation gets a folder of its own in it ' +
        '(`WORKSPACE_SCOPE`); the file tools cannot leave that folder, and sandboxed commands can write nowhere ' +
        "else. It may not hold the bot's own files (start-up refuses)",
    }),
  WORKSPACE_MAX_MB: positiveInt.default(2048).register(settingDocs, {
    section: 'Workspaces',
    description:
      "what one conversation's folder (all of `WORKSPACE_DIR` with `WORKSPACE_SCOPE=shared`) may hold on disk, " +
      'in MB: a command is refused while it is over (but one that only deletes files, which is never ended), ' +
      'may write no file larger than what is left, and is ended if it takes the folder past the cap while it ' +
      'runs; `write_file` and `edit_file` refuse a write that would pass it. Measured, this is best effort (a ' +
      'fast command can pass it before the walk sees it); `WORKSPACE_DISKS` makes the kernel hold it',
  }),
  WORKSPACE_DISKS: z
    .enum(['auto', 'on', 'off'])
    .default('off')
    .register(settingDocs, {
      section: 'Workspaces',
      description:
        "`on`: each thread's or channel's folder gets a disk of its own at its first command, an ext4 image of " +
        '`WORKSPACE_MAX_MB` loop-mounted over the folder, so no command can pass the cap however it writes (the ' +
        'bot must be root with loop devices, or it does not start); `auto`: the same where it can be done, the ' +
        'cap measured elsewhere (the start-up line says which); `off`: measured only. Only with the sandbox: ' +
        'commands on the host (`SHELL_SANDBOX=off`) can write anywhere the bot can, and get no disk. See [The ' +
        'shell sandbox](security.md#the-shell-sandbox)',
    }),
  MAX_FILE_BYTES: positiveInt.default(20 * 1024 * 1024).register(settingDocs, {
    section: 'Files',
    description:
      'the largest one file the bot fetches from a thread (a larger one is named in a note and not fetched), ' +
      'and the largest it posts with `attach_file`',
    defaultNote: '20 MiB',
  }),
  MAX_FILES_PER_MESSAGE: positiveInt.default(10).register(settingDocs, {
    section: 'Files',
    description: 'files one message may bring; the rest are named in a note and not fetched',
  }),
  MAX_CONVERSATION_FILE_BYTES: positiveInt.default(200 * 1024 * 1024).register(settingDocs, {
    section: 'Files',
    description:
      'what all the files shared in one thread may add up to in its `uploads/` folder; past it, more files are ' +
      'named in a note and not fetched',
    defaultNote: '200 MiB',
  }),
  ATTACH_COMPRESSED: z
    .enum(['refuse', 'allow'])
    .default('refuse')
    .register(settingDocs, {
      section: 'Files',
      description:
        'what `attach_file` does with compressed contents the check for secret values cannot read. A zip (and so ' +
        '`.docx`, `.xlsx`, `.pptx`, `.odt`, `.ods`, `.jar`, `.epub`), a gzip file and a zlib stream, known by ' +
        'their first bytes whatever their name, are opened and what is inside is checked either way (refused if ' +
        'it holds a secret value). What cannot be read: the other formats (bzip2, xz, zstd, 7z, rar, lz4, lzip, ' +
        'lzma, and compressed members of a tar), an encrypted zip member, a zip method other than stored or ' +
        'deflate, a damaged zip, and anything past the zip-bomb bounds: `refuse` it, or `allow` it to be posted ' +
        "unchecked (the tool's result lists what went unchecked). See [What secret masking " +
        'catches](security.md#what-secret-masking-catches-and-what-it-cannot)',
    }),
  MAX_IMAGE_PIXELS: positiveInt.default(40_000_000).register(settingDocs, {
    section: 'Files',
    description:
      'the most pixels (width × height) a shared image may have; a larger one is refused from its header, never ' +
      'decoded (decoding costs what the pixels do: a flat 100-megapixel PNG of 400 KB took 11.5 s of CPU), and ' +
      'the note names the limit',
    defaultNote: '40 megapixels',
  }),
  PDF_MAX_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(128)
    .default(512)
    .register(settingDocs, {
      section: 'Files',
      description:
        "the memory the process that reads one PDF's text may hold (Node itself and the PDF library take 70 to 90 " +
        "MB of it before reading anything); past it the process is killed, the PDF's text is not read, and the " +
        'note names the limit. At least 128',
    }),
  WORKSPACE_SCOPE: z
    .enum(['thread', 'channel', 'shared'])
    .default('thread')
    .register(settingDocs, {
      section: 'Workspaces',
      description:
        'whose files a conversation sees: `thread` (each thread its own folder, removed with the thread by ' +
        '`/forget` and retention), `channel` (one folder per channel, kept), or `shared` (every thread of every ' +
        'channel, workspace and server works in `WORKSPACE_DIR` itself: see [Workspaces](security.md#workspaces))',
    }),
  GRANT_ROOTS: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Workspaces',
      description:
        'absolute folders, comma-separated: `request_directory` may grant only folders inside one of them (system ' +
        "folders and the bot's own never, whatever this says). A bot running as root grants folders in `/home`, " +
        '`/opt`, `/srv`, `/mnt`, `/media`, or belonging to a user other than root and `SHELL_RUN_AS`, only inside ' +
        'these',
      unset: 'unset: any project folder (a root bot: none of those)',
    }),
};
