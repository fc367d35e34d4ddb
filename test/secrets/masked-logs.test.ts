// Logs and the files at rest: the configured secrets' exact values never reach a log line,
// and start-up says when `.env` is open to other accounts.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { envFileWarning, SecretMasker } from '../../src/secrets/index.js';
import { tempDir } from '../support/test-connector.js';

function capture(masker: SecretMasker) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('debug', stream, masker) };
}

describe('every log line is masked with the configured secrets', () => {
  // Shaped like nothing the token patterns know (no sk-, xoxb-, Bearer): only the exact value finds it.
  const KEY = 'plain-looking-key-8c1e9f';
  const PASSWORD = 'store"pass\\word';

  it("in the message, any field, an error message and stack, and a child process's stderr", () => {
    const { lines, logger } = capture(new SecretMasker([KEY, PASSWORD]));
    logger.info({ detail: `using ${KEY}` }, `message quoting ${KEY}`);
    logger.error({ err: new Error(`connect failed for redis://:${PASSWORD}@cache`) }, 'store failed');
    logger.debug({ server: 'notes', stderr: `token=${KEY}` }, 'MCP server stderr');
    const all = lines.join('');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain('pass\\\\word');
    expect(all).not.toContain('word');
    // Still one valid JSON object per line, with the mask in place.
    const parsed = lines.map(
      (line) => JSON.parse(line) as { msg: string; detail?: string; err?: { message: string; stack: string } },
    );
    expect(parsed[0]).toMatchObject({ msg: 'message quoting [secret]', detail: 'using [secret]' });
    expect(parsed[1]!.err!.message).toBe('connect failed for redis://:[secret]@cache');
    expect(parsed[1]!.err!.stack).toContain('[secret]');
  });

  it("a value learnt after the logger was made (an MCP server's token) is masked from then on", () => {
    const masker = new SecretMasker([KEY]);
    const { lines, logger } = capture(masker);
    masker.add(['mcp-server-token-5511']);
    logger.debug({ stderr: 'auth with mcp-server-token-5511' }, 'MCP server stderr');
    expect(lines.join('')).not.toContain('mcp-server-token-5511');
  });

  it('the token patterns still apply without a masker', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    logger.info({}, 'sent xoxb-1111-2222-secret');
    expect(lines.join('')).not.toContain('xoxb-1111-2222-secret');
  });
});

describe('.env at rest', () => {
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
  afterEach(async () => {
    await dir?.remove();
    dir = undefined;
  });

  it.skipIf(process.platform === 'win32')(
    'warns when .env is readable by others or by its group, and says how to fix it',
    async () => {
      dir = await tempDir();
      const env = join(dir.path, '.env');
      await writeFile(env, 'OPENAI_API_KEY=x\n');
      await chmod(env, 0o644);
      expect(envFileWarning(env)).toBe(
        `${env} holds the bot's secrets but is readable by every account on this machine (mode 644). Fix: chmod 600 ${env}`,
      );
      await chmod(env, 0o640);
      expect(envFileWarning(env)).toMatch(/readable by the file's group \(mode 640\)\. Fix: chmod 600/);
      await chmod(env, 0o666);
      expect(envFileWarning(env)).toMatch(
        /readable by every account on this machine and writable by every account \(mode 666\)/,
      );
      await chmod(env, 0o600);
      expect(envFileWarning(env)).toBeNull();
      await chmod(env, 0o400);
      expect(envFileWarning(env)).toBeNull();
    },
  );

  it('says nothing when there is no .env, or on Windows', async () => {
    dir = await tempDir();
    expect(envFileWarning(join(dir.path, '.env'))).toBeNull();
    const env = join(dir.path, '.env');
    await writeFile(env, 'X=1\n');
    await chmod(env, 0o644);
    expect(envFileWarning(env, 'win32')).toBeNull();
  });
});
