// attach_file and compressed files, through the assembled core: the spreadsheet a team asks for
// ("make me a spreadsheet of X and attach it") is a zip, so it is opened and its parts checked
// rather than refused; one whose cells hold a secret value is refused, and so are a zip bomb and
// an encrypted member; a gzip is read the same way; an xz still needs ATTACH_COMPRESSED=allow.
// The approval card says before the click what the check will do.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore } from '../../src/core.js';
import type { EngineEvent } from '../../src/engine/index.js';
import type { FileSink, OutgoingFile } from '../../src/files/index.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { threadFolder } from '../support/conversation-folders.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger, waitFor } from '../support/engine-kit.js';
import { tempDir } from '../support/test-connector.js';
import { xlsxOf, zipOf } from '../support/zip-builder.js';

const SECRET = 'sekrit-value-0123456789';
const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };
/** `printf 'quarterly numbers\n' | xz`. */
const XZ = Buffer.from(
  'fd377a585a000004e6d6b4460200210116000000742fe5a3010011717561727465726c79206e756d626572730a000000c430f40a74901d8c00012a124b0854bc1fb6f37d010000000004595a',
  'hex',
);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Boots the core, has the model call attach_file on a file `setup` writes, approves it once, and returns what happened. */
async function attach(name: string, bytes: Buffer, env: Record<string, string> = {}) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const core = await startCore(
    loadConfig({ ...coreTestEnv(dir.path, fake), ANTHROPIC_API_KEY: SECRET, PERMISSION_MODE: 'interactive', ...env }),
    { logger: memoryLogger() },
  );
  cleanups.push(() => core.close());
  const events: EngineEvent[] = [];
  let promptId: string | undefined;
  core.observers.add('test', {
    onEvent: (_s, event, prompt) => void (events.push(event), prompt && (promptId = prompt.id)),
  });
  const posted: { file: OutgoingFile }[] = [];
  const sink: FileSink = {
    maxBytes: async () => 1024 * 1024,
    post: async (_thread, file) => (posted.push({ file }), {}),
  };
  core.files.registerSink('test', sink);
  await core.recover();
  fake.replyText('first');
  await core.manager.deliver(key, { text: 'hi', userId: 'U1', eventId: 'e1' });
  await core.manager.idle();
  await writeFile(join(threadFolder(join(dir.path, 'workspace'), key), name), bytes);
  fake.replyToolCalls([{ name: 'attach_file', arguments: { path: name } }]);
  fake.replyText('done');
  await core.manager.deliver(key, { text: 'attach it', userId: 'U1', eventId: 'e2' });
  await waitFor(() => promptId !== undefined);
  const asked = events.find((event) => event.type === 'permission_required') as Extract<
    EngineEvent,
    { type: 'permission_required' }
  >;
  await core.manager.resolve(promptId!, { choice: 'once' }, 'U1');
  await core.manager.idle();
  const finished = events.find((event) => event.type === 'tool_finished') as Extract<
    EngineEvent,
    { type: 'tool_finished' }
  >;
  // The preview is the result as JSON: a member's name comes in quotes, escaped.
  return {
    card: asked.arguments as Record<string, unknown>,
    status: finished.status,
    result: (finished.resultPreview ?? '').replaceAll('\\"', '"'),
    posted,
  };
}

describe('attach_file and compressed files', () => {
  it('a spreadsheet (an .xlsx: a zip of XML parts) is opened, checked and posted; the card says it will be', async () => {
    const sheet = xlsxOf(['Region', 'Revenue', 'North', '1200', 'South', '950']);
    const { card, status, posted } = await attach('revenue.xlsx', sheet);
    expect(card.compressed).toBe(
      'a zip archive: it will be opened and what is inside checked for secret values; refused if it holds one, or if something inside cannot be read (ATTACH_COMPRESSED)',
    );
    expect(status).toBe('ok');
    expect(posted.map((p) => [p.file.name, p.file.size])).toEqual([['revenue.xlsx', sheet.length]]);
  });

  it('a spreadsheet with a secret value in a cell, as written or in base64, is refused naming the check', async () => {
    for (const cell of [`token ${SECRET}`, Buffer.from(`token=${SECRET}`).toString('base64')]) {
      const { status, result, posted } = await attach('keys.xlsx', xlsxOf(['Name', 'Value', 'api', cell]));
      expect(status).toBe('error');
      expect(result).toContain(
        'keys.xlsx › "xl/sharedStrings.xml", inflated, holds a configured secret value, which cannot be masked inside a compressed file',
      );
      expect(posted).toHaveLength(0);
    }
  });

  it('a zip bomb is refused naming the bound; an encrypted member is refused', async () => {
    const bomb = zipOf([
      { name: '[Content_Types].xml', bytes: Buffer.from('<Types/>') },
      { name: 'xl/worksheets/sheet1.xml', bytes: Buffer.alloc(32 * 1024 * 1024) },
    ]);
    const refused = await attach('big.xlsx', bomb);
    expect(refused.status).toBe('error');
    expect(refused.result).toContain(
      'big.xlsx › "xl/worksheets/sheet1.xml" says it inflates to more than 100 times its compressed',
    );
    expect(refused.result).toContain(
      '(and past 4 MB), the most the check inflates: a zip bomb, or too large to check for secret values',
    );
    expect(refused.posted).toHaveLength(0);

    const locked = await attach(
      'locked.docx',
      zipOf([
        {
          name: 'word/document.xml',
          bytes: Buffer.from('x'.repeat(40)),
          flags: 1,
          method: 0,
          data: Buffer.alloc(52, 0x5a),
          declaredSize: 40,
        },
      ]),
    );
    expect(locked.status).toBe('error');
    expect(locked.result).toContain(
      'locked.docx › "word/document.xml" is encrypted: it cannot be checked for secret values',
    );
    expect(locked.posted).toHaveLength(0);
  });

  it('a gzip of clean text is posted, a gzip of a secret refused', async () => {
    const clean = await attach('notes.txt.gz', gzipSync(Buffer.from('meeting notes\n'.repeat(40))));
    expect(clean.card.compressed).toContain('a gzip file: it will be opened');
    expect(clean.status).toBe('ok');
    expect(clean.posted).toHaveLength(1);

    const dirty = await attach('env.gz', gzipSync(Buffer.from(`ANTHROPIC_API_KEY=${SECRET}\n`)));
    expect(dirty.status).toBe('error');
    expect(dirty.result).toContain('env.gz, inflated, holds a configured secret value');
    expect(dirty.posted).toHaveLength(0);
  });

  it('an xz file is still refused by default, and posted unchecked (and said so) with ATTACH_COMPRESSED=allow', async () => {
    const refused = await attach('data.bin', XZ);
    expect(refused.card.compressed).toBe(
      'an xz file: the check cannot read it, so it will be refused (ATTACH_COMPRESSED)',
    );
    expect(refused.status).toBe('error');
    expect(refused.result).toContain('data.bin is an xz file: it cannot be checked for secret values');
    expect(refused.result).toContain('ATTACH_COMPRESSED=allow');
    expect(refused.posted).toHaveLength(0);

    const allowed = await attach('data.bin', XZ, { ATTACH_COMPRESSED: 'allow' });
    expect(allowed.card.compressed).toBe(
      'an xz file: its contents cannot be read, so they are not checked for secret values (ATTACH_COMPRESSED=allow)',
    );
    expect(allowed.status).toBe('ok');
    expect(allowed.result).toContain(
      'posted without checking these for secret values (ATTACH_COMPRESSED=allow): data.bin: is an xz file',
    );
    expect(allowed.posted).toHaveLength(1);
  });
});
