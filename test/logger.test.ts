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
    logger.error({ request: { headers: { authorization: 'Bearer abcdefghijklmnop' } } }, 'sent xapp-1-A0-secret to slack');
    const all = lines.join('\n');
    for (const secret of ['xoxb-1111-2222-secret', 'plain-secret-field', 'sk-ant-api03-verysecretvalue', 'abcdefghijklmnop', 'xapp-1-A0-secret']) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('[redacted]');
    expect(all).toContain('provider failed');
  });
});
