import { describe, expect, it } from 'vitest';
import { readableText } from '../../connectors/slack/message-text.js';

describe('readableText', () => {
  it('shows broadcasts and user groups as the words a person typed, and decodes what Slack escaped', () => {
    const names = new Map([['U0ADA', 'ada']]);
    expect(readableText('<@U0BOT> tell <!here> and <!subteam^S0OPS|@ops>, cc <@U0ADA>', 'U0BOT', names)).toBe(
      'tell @here and @ops, cc @ada',
    );
    expect(readableText('<!subteam^S0OPS>', 'U0BOT', names)).toBe('@group');
    // What the person typed literally: the model reads it as typed. Echoing it is the outbound guard's business.
    expect(readableText('/model openai:&lt;!channel&gt; &amp; more', 'U0BOT', names)).toBe(
      '/model openai:<!channel> & more',
    );
  });
});
