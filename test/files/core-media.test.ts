// The media helpers in the assembled core: a large screenshot shared in a thread reaches the
// model as its fitted copy (the original kept in uploads/), a PDF reaches an OpenAI model as
// its extracted text with the .txt beside it, and a broken image or PDF is named in the
// thread and to the model instead of failing the request; a PDF bomb and an image of too
// many pixels are refused with notes that name the limit and its setting.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startCore } from '../../src/core.js';
import type { EngineEvent } from '../../src/engine/index.js';
import { IMAGE_LIMITS } from '../../src/files/image-prep.js';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { threadFolder } from '../support/conversation-folders.js';
import { coreTestEnv } from '../support/core-env.js';
import { memoryLogger } from '../support/engine-kit.js';
import {
  writeCorruptPdf,
  writeFlatPng,
  writePdfBomb,
  writePng,
  writeTextPdf,
  writeTruncatedPng,
} from '../support/file-fixtures.js';
import { FileHost } from '../support/file-host.js';
import { tempDir } from '../support/test-connector.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const key = { platform: 'test', workspace: 'W1', channel: 'C1', thread: 'T1' };

async function boot(settings: Record<string, string> = {}) {
  const made = await tempDir();
  cleanups.push(made.remove);
  const fake = await new FakeOpenAI().start();
  cleanups.push(() => fake.stop());
  const host = await new FileHost().start();
  cleanups.push(() => host.stop());
  const core = await startCore(loadConfig({ ...coreTestEnv(made.path, fake), ...settings }), {
    logger: memoryLogger(),
  });
  cleanups.push(() => core.close());
  const problems: string[][] = [];
  core.observers.add('test', {
    onEvent: (_s, event: EngineEvent) => void (event.type === 'input_files' && problems.push(event.problems)),
  });
  core.files.registerSource('test', host.source());
  await core.recover();
  return {
    core,
    fake,
    host,
    problems,
    dir: made.path,
    uploads: join(threadFolder(join(made.path, 'workspace'), key), 'uploads'),
  };
}

type Part = { type: string; text?: string; image_url?: { url: string } };
function userParts(fake: FakeOpenAI, request: number): Part[] {
  const messages = fake.bodies[request]!.messages.filter((m) => m.role === 'user');
  return messages.flatMap((m) =>
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Part[]),
  );
}

describe('shared images and PDFs, made fit for the model', () => {
  it('a 4000×3000 screenshot reaches the model as a 1568 px JPEG copy; uploads/ keeps the original', async () => {
    const { core, fake, host, uploads, dir } = await boot();
    const original = await readFile(await writePng(join(dir, 'shot.png'), 4000, 3000));
    fake.replyText('A blue screen.');
    await core.manager.deliver(key, {
      text: 'what is this?',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('shot.png', original, 'image/png')],
    });
    await core.manager.idle();

    expect(await readFile(join(uploads, 'shot.png'))).toEqual(original);
    const url = userParts(fake, 0).find((part) => part.type === 'image_url')?.image_url?.url ?? '';
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    const sent = Buffer.from(url.slice('data:image/jpeg;base64,'.length), 'base64');
    expect(sent.length).toBeLessThanOrEqual(IMAGE_LIMITS.maxBytes);
    const metadata = await sharp(sent).metadata();
    expect({ format: metadata.format, width: metadata.width, height: metadata.height }).toEqual({
      format: 'jpeg',
      width: 1568,
      height: 1176,
    });
  });

  it('a PDF reaches an OpenAI model as its text, saved beside it as a .txt the model is told of', async () => {
    const { core, fake, host, uploads, dir } = await boot();
    const pdf = await readFile(
      await writeTextPdf(join(dir, 'q3.pdf'), [['Q3 report', 'Revenue: 4,213'], ['Churn fell to 2%']]),
    );
    fake.replyText('Revenue was 4,213.');
    await core.manager.deliver(key, {
      text: 'summarise',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('q3.pdf', pdf, 'application/pdf')],
    });
    await core.manager.idle();

    expect(await readFile(join(uploads, 'q3.pdf.txt'), 'utf8')).toBe('Q3 report\nRevenue: 4,213\n\nChurn fell to 2%');
    const text = userParts(fake, 0)
      .map((part) => part.text ?? '')
      .join('\n');
    expect(text).toContain('its text is in uploads/q3.pdf.txt');
    expect(text).toContain('[Text of the PDF uploads/q3.pdf:]\nQ3 report\nRevenue: 4,213\n\nChurn fell to 2%');
  });

  it('a truncated PNG and a corrupt PDF are named in the thread and to the model; the request carries no image', async () => {
    const { core, fake, host, problems, dir } = await boot();
    const png = await readFile(await writeTruncatedPng(join(dir, 'cut.png')));
    const pdf = await readFile(await writeCorruptPdf(join(dir, 'bad.pdf')));
    fake.replyText('Both files are damaged.');
    await core.manager.deliver(key, {
      text: 'look',
      userId: 'U1',
      eventId: 'e1',
      attachments: [host.add('cut.png', png, 'image/png'), host.add('bad.pdf', pdf, 'application/pdf')],
    });
    await core.manager.idle();

    expect(problems).toEqual([
      [
        expect.stringMatching(
          /^cut\.png: saved as uploads\/cut\.png, but the model cannot see it: the file starts like a PNG image but cannot be decoded \(.+\)$/,
        ),
        'bad.pdf: saved as uploads/bad.pdf, but the model cannot see it: its text could not be read (the file is not a readable PDF (Invalid PDF structure))',
      ],
    ]);
    const parts = userParts(fake, 0);
    expect(parts.some((part) => part.type === 'image_url')).toBe(false);
    const text = parts.map((part) => part.text ?? '').join('\n');
    expect(text).toContain('uploads/cut.png ("cut.png"; image/png');
    expect(text).toContain('an image you are not shown (the file starts like a PNG image but cannot be decoded');
  });

  it(
    'a PDF bomb and a 100-megapixel PNG are refused with notes naming their limits; a normal PDF in the same message still reaches the model',
    { timeout: 120_000 },
    async () => {
      const { core, fake, host, problems, dir } = await boot({ PDF_MAX_MEMORY_MB: '128' });
      const bomb = await readFile(await writePdfBomb(join(dir, 'bomb.pdf')));
      const huge = await readFile(await writeFlatPng(join(dir, 'huge.png'), 10_000, 10_000));
      const pdf = await readFile(await writeTextPdf(join(dir, 'notes.pdf'), [['Ship on Friday']]));
      fake.replyText('One of three.');
      await core.manager.deliver(key, {
        text: 'read these',
        userId: 'U1',
        eventId: 'e1',
        attachments: [
          host.add('bomb.pdf', bomb, 'application/pdf'),
          host.add('huge.png', huge, 'image/png'),
          host.add('notes.pdf', pdf, 'application/pdf'),
        ],
      });
      await core.manager.idle();

      const pdfRefusal =
        'its text could not be read (reading it needs more than the 128 MB of memory the PDF reader may use (PDF_MAX_MEMORY_MB))';
      const imageRefusal =
        'the PNG image is 10000 × 10000 pixels (100 megapixels), more than the 40 megapixels an image may have (MAX_IMAGE_PIXELS)';
      expect(problems).toEqual([
        [
          `bomb.pdf: saved as uploads/bomb.pdf, but the model cannot see it: ${pdfRefusal}`,
          `huge.png: saved as uploads/huge.png, but the model cannot see it: ${imageRefusal}`,
        ],
      ]);
      const text = userParts(fake, 0)
        .map((part) => part.text ?? '')
        .join('\n');
      expect(text).toContain(`uploads/bomb.pdf ("bomb.pdf"; application/pdf, 2 MB): a PDF (${pdfRefusal})`);
      expect(text).toContain(`an image you are not shown (${imageRefusal})`);
      expect(text).toContain(`[PDF uploads/bomb.pdf was shared; ${pdfRefusal}]`);
      expect(text).not.toContain('its text could not be read (its text could not be read');
      expect(text).toContain('[Text of the PDF uploads/notes.pdf:]\nShip on Friday');
      expect(userParts(fake, 0).some((part) => part.type === 'image_url')).toBe(false);
    },
  );
});
