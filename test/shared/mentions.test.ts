import { describe, expect, it } from 'vitest';
import {
  isBroadcastFree,
  neutraliseBroadcasts,
  WORD_JOINER as J,
  type MentionDialect,
} from '../../connectors/shared/mentions.js';

const SLACK_DIALECTS: MentionDialect[] = ['slack-mrkdwn', 'slack-markdown', 'slack-plain'];

/** What a Slack client would read as a broadcast, in any of its dialects. */
const LIVE_SLACK =
  /<!(?:channel|here|everyone|group|subteam\^)|(?<![\p{L}\p{N}_])@(?:channel|here|everyone)(?![\p{L}\p{N}_])/iu;

describe('neutraliseBroadcasts for Slack', () => {
  it.each<[string, string, string, string]>([
    // input, mrkdwn, markdown / plain
    ['Hey <!channel>!', 'Hey &lt;!channel&gt;!', `Hey <${J}!channel>!`, 'a bare broadcast'],
    ['<!here|here> look', '&lt;!here|here&gt; look', `<${J}!here|here> look`, 'a labelled one'],
    [
      'ping <!subteam^S123|@team> now',
      'ping &lt;!subteam^S123|@team&gt; now',
      `ping <${J}!subteam^S123|@team> now`,
      'a user group',
    ],
    [
      '<!everyone> and <!group>',
      '&lt;!everyone&gt; and &lt;!group&gt;',
      `<${J}!everyone> and <${J}!group>`,
      'everyone, and the old name of channel',
    ],
    ['<!CHANNEL>', '&lt;!CHANNEL&gt;', `<${J}!CHANNEL>`, 'any case'],
    [
      '@channel @here @everyone',
      `@${J}channel @${J}here @${J}everyone`,
      `@${J}channel @${J}here @${J}everyone`,
      'the plain words',
    ],
    ['(@here), @here.', `(@${J}here), @${J}here.`, `(@${J}here), @${J}here.`, 'the words next to punctuation'],
    [
      '`<!channel>` and ```\n@here\n```',
      '`&lt;!channel&gt;` and ```\n@' + J + 'here\n```',
      '`<' + J + '!channel>` and ```\n@' + J + 'here\n```',
      'inside code too',
    ],
  ])('%s → inert (%s)', (input, mrkdwn, other) => {
    expect(neutraliseBroadcasts(input, 'slack-mrkdwn')).toBe(mrkdwn);
    expect(neutraliseBroadcasts(input, 'slack-markdown')).toBe(other);
    expect(neutraliseBroadcasts(input, 'slack-plain')).toBe(other);
  });

  it('an escaped broadcast is text in mrkdwn, but a markdown renderer decodes it: there it gets a joiner too', () => {
    expect(neutraliseBroadcasts('&lt;!channel&gt;', 'slack-mrkdwn')).toBe('&lt;!channel&gt;');
    expect(neutraliseBroadcasts('&lt;!channel&gt;', 'slack-markdown')).toBe(`&lt;${J}!channel&gt;`);
    expect(neutraliseBroadcasts('&#60;!here&#62; &#x3C;!everyone>', 'slack-markdown')).toBe(
      `&#60;${J}!here&#62; &#x3C;${J}!everyone>`,
    );
  });

  it.each([
    ['a user mention', 'ask <@U012AB3CD> or <@W0123|ada>'],
    ['a channel link', 'see <#C0123456|general>'],
    ['a date token', '<!date^1392734382^{date}|Feb 18, 2014>'],
    ['an e-mail address', 'write to ops@here.example or team@channel.io'],
    ['a URL with a handle', 'https://mastodon.social/@here and <https://example.com/@everyone|profile>'],
    ['words that only start alike', '@heresy @channels @everyones'],
    ['nothing at all', 'plain words, no mentions'],
  ])('%s stays as it is', (_what, text) => {
    for (const dialect of SLACK_DIALECTS) expect(neutraliseBroadcasts(text, dialect)).toBe(text);
  });

  it('a link label is text: a broadcast word in it is neutralised, the URL is not', () => {
    expect(neutraliseBroadcasts('<https://example.com/a|tell @channel>', 'slack-mrkdwn')).toBe(
      `<https://example.com/a|tell @${J}channel>`,
    );
  });

  it('a token with no closing bracket on its line does not swallow a later quote', () => {
    expect(neutraliseBroadcasts('<!channel\n> quoted', 'slack-mrkdwn')).toBe('&lt;!channel\n> quoted');
  });

  it('is idempotent, and leaves nothing a Slack client would read as a broadcast', () => {
    const nasty = 'x<!channel>y <!here|h> &lt;!everyone&gt; @here @channel. <!subteam^S1> <<!here>> <!here<!channel>';
    for (const dialect of SLACK_DIALECTS) {
      const once = neutraliseBroadcasts(nasty, dialect);
      expect(neutraliseBroadcasts(once, dialect)).toBe(once);
      expect(isBroadcastFree(once, dialect)).toBe(true);
      expect(once).not.toMatch(LIVE_SLACK);
    }
  });
});

describe('a streamed piece (more text follows in the same message)', () => {
  it.each(['<', '<!', '<!cha', '<!subteam', '&', '&l', '&lt;', '&lt;!ev', '&#6', '&#x3C;!h', '@', '@he', '@everyo'])(
    'a piece ending in %j is sealed, so no next piece can complete a broadcast',
    (end) => {
      const piece = neutraliseBroadcasts(`so ${end}`, 'slack-markdown', { continued: true });
      expect(piece).toBe(`so ${end}${J}`);
      // Whatever the rest of the broadcast is, the joined text stays inert.
      for (const whole of [
        '<!channel>',
        '<!here|here>',
        '<!subteam^S1>',
        '&lt;!everyone&gt;',
        '&#60;!here&#62;',
        '&#x3C;!here>',
        '@channel',
        '@here',
        '@everyone',
      ]) {
        if (!whole.toLowerCase().startsWith(end.toLowerCase())) continue;
        expect(`${piece}${neutraliseBroadcasts(whole.slice(end.length), 'slack-markdown')}`).not.toMatch(LIVE_SLACK);
      }
    },
  );

  it('a piece that cannot be the start of one is not touched, nor is an already sealed piece', () => {
    for (const text of ['a <b', 'ops@here.example', 'x@he', 'done.', '<@U1>', 'ask <@'])
      expect(neutraliseBroadcasts(text, 'slack-markdown', { continued: true })).toBe(text);
    const sealed = neutraliseBroadcasts('so <!cha', 'slack-markdown', { continued: true });
    expect(neutraliseBroadcasts(sealed, 'slack-markdown', { continued: true })).toBe(sealed);
    expect(neutraliseBroadcasts('so <!channel', 'slack-markdown', { continued: true })).toBe(`so <${J}!channel`);
  });
});

describe('neutraliseBroadcasts for Discord', () => {
  it('@everyone, @here and role mentions go inert; user and channel mentions stay', () => {
    expect(neutraliseBroadcasts('@everyone look, @here too', 'discord')).toBe(`@${J}everyone look, @${J}here too`);
    expect(neutraliseBroadcasts('ping <@&123456789>', 'discord')).toBe(`ping <@&${J}123456789>`);
    expect(neutraliseBroadcasts('ask <@123> in <#456>, or <@!789>', 'discord')).toBe(
      'ask <@123> in <#456>, or <@!789>',
    );
    // Slack's spelling means nothing on Discord.
    expect(neutraliseBroadcasts('@channel', 'discord')).toBe('@channel');
    expect(neutraliseBroadcasts('https://example.com/@everyone', 'discord')).toBe('https://example.com/@everyone');
  });
});
