import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('debug', stream) };
}

describe('logs never carry secrets', () => {
  it('masks tokens and keys in fields, nested objects, errors and the message itself', () => {
    const { lines, logger } = capture();
    logger.info({ config: { SLACK_BOT_TOKEN: 'xoxb-1111-2222-secret' }, token: 'plain-secret-field' }, 'starting');
    logger.warn({ err: new Error('401 for Bearer sk-ant-api03-verysecretvalue') }, 'provider failed');
    logger.error(
      { request: { headers: { authorization: 'Bearer abcdefghijklmnop' } } },
      'sent xapp-1-A0-secret to slack',
    );
    const all = lines.join('\n');
    for (const secret of [
      'xoxb-1111-2222-secret',
      'plain-secret-field',
      'sk-ant-api03-verysecretvalue',
      'abcdefghijklmnop',
      'xapp-1-A0-secret',
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('[redacted]');
    expect(all).toContain('provider failed');
  });
});

describe('log formats', () => {
  it('piped (any destination given), lines are JSON, one object per line', () => {
    const { lines, logger } = capture();
    logger.info({ port: 3000 }, 'Slack connector started');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, port: 3000, msg: 'Slack connector started' });
  });

  it('pretty lines read as text and are masked like JSON ones, configured secrets included', async () => {
    const { SecretMasker } = await import('../src/secrets/index.js');
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', stream, new SecretMasker(['store-password-42']), {
      format: 'pretty',
      colorize: false,
    });
    logger.info(
      { store: 'postgresql://bot:store-password-42@db/bot', config: { SLACK_BOT_TOKEN: 'xoxb-1111-2222-secret' } },
      'running with xapp-1-A0-secret',
    );
    logger.warn({ err: new Error('401 for Bearer sk-ant-api03-verysecretvalue') }, 'provider failed');
    const all = lines.join('');
    expect(all).toMatch(/INFO.*running with/);
    expect(all).toMatch(/WARN.*provider failed/);
    expect(() => JSON.parse(lines[0]!) as unknown).toThrow();
    for (const secret of [
      'store-password-42',
      'xoxb-1111-2222-secret',
      'xapp-1-A0-secret',
      'sk-ant-api03-verysecretvalue',
    ])
      expect(all).not.toContain(secret);
  });
});
