// How long a staged upload stays, on a clock the test moves: unsent uploads go after
// UNSENT_TTL_MS; sent ones stay until the files room has read them, then READ_GRACE_MS more,
// and SENT_TTL_MS at most; uploads of a message the bot did not take go at once.
import { existsSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/test-connector.js';
import { READ_GRACE_MS, SENT_TTL_MS, UNSENT_TTL_MS, UploadStaging } from '../../connectors/web/upload-staging.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function staging(maxStagedBytes = 1_000_000) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const clock = { now: 1_000_000 };
  const uploads = new UploadStaging({
    dir: join(dir.path, 'uploads'),
    maxFileBytes: 10_000,
    maxStagedBytes,
    now: () => clock.now,
  });
  cleanups.push(async () => uploads.close());
  const add = async (text: string) => {
    const result = await uploads.receive(Readable.from([Buffer.from(text)]) as unknown as IncomingMessage, {
      name: `${text}.txt`,
    });
    if (!result.ok) throw new Error(result.message);
    return result.upload.id;
  };
  const onDisk = (id: string) => existsSync(join(dir.path, 'uploads', id));
  return { uploads, clock, add, onDisk };
}

async function drain(body: unknown): Promise<string> {
  let text = '';
  for await (const chunk of body as AsyncIterable<Buffer>) text += chunk.toString();
  return text;
}

describe('staged uploads', () => {
  it('an upload never sent is removed UNSENT_TTL_MS after it came, not before', async () => {
    const { uploads, clock, add, onDisk } = await staging();
    const id = await add('unsent');
    clock.now += UNSENT_TTL_MS - 1;
    await uploads.sweep();
    expect(onDisk(id)).toBe(true);
    clock.now += 1;
    await uploads.sweep();
    expect(onDisk(id)).toBe(false);
    expect(uploads.take([id]).ok).toBe(false);
  });

  it('a sent upload stays until it is read, then READ_GRACE_MS more (a retry can read it again)', async () => {
    const { uploads, clock, add, onDisk } = await staging();
    const id = await add('sent');
    const taken = uploads.take([id]);
    if (!taken.ok) throw new Error(taken.message);
    expect(taken.incoming).toEqual([{ platform: 'web', id, name: 'sent.txt', url: `web-upload:${id}`, size: 4 }]);
    clock.now += UNSENT_TTL_MS * 3;
    await uploads.sweep();
    expect(onDisk(id)).toBe(true);

    expect(await drain((await uploads.source.open(taken.incoming[0]!, new AbortController().signal)).body)).toBe(
      'sent',
    );
    clock.now += READ_GRACE_MS - 1;
    await uploads.sweep();
    expect(await drain((await uploads.source.open(taken.incoming[0]!, new AbortController().signal)).body)).toBe(
      'sent',
    );
    clock.now += 1;
    await uploads.sweep();
    expect(onDisk(id)).toBe(false);
    await expect(uploads.source.open(taken.incoming[0]!, new AbortController().signal)).rejects.toThrow(
      /no longer has this upload.*attach it again/,
    );
  });

  it('a sent upload never read goes after SENT_TTL_MS; one discarded goes at once', async () => {
    const { uploads, clock, add, onDisk } = await staging();
    const kept = await add('kept');
    const dropped = await add('dropped');
    expect(uploads.take([kept, dropped]).ok).toBe(true);
    await uploads.discard([dropped]);
    expect(onDisk(dropped)).toBe(false);
    clock.now += SENT_TTL_MS - 1;
    await uploads.sweep();
    expect(onDisk(kept)).toBe(true);
    clock.now += 1;
    await uploads.sweep();
    expect(onDisk(kept)).toBe(false);
  });

  it('what all staged files may hold is capped (MAX_CONVERSATION_FILE_BYTES), and space comes back as they go', async () => {
    const { uploads, add } = await staging(10);
    const first = await add('123456');
    const refused = await uploads.receive(Readable.from([Buffer.from('78901')]) as unknown as IncomingMessage, {
      name: 'more.txt',
    });
    expect(refused).toMatchObject({
      ok: false,
      status: 507,
      message: expect.stringMatching(/MAX_CONVERSATION_FILE_BYTES/) as unknown,
    });
    await uploads.discard([first]);
    await add('78901');
  });
});
