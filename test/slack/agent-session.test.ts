import { describe, expect, it } from 'vitest';
import { isBroadcastFree } from '../../connectors/shared/mentions.js';
import {
  DEFAULT_LOADING_MESSAGES,
  SESSION_STATUS,
  sessionTitle,
  TITLE_LIMIT,
} from '../../connectors/slack/agent-session.js';

describe('agent session statuses', () => {
  it('map each WorkStatus to one of the four values Slack takes', () => {
    expect(SESSION_STATUS).toEqual({ thinking: 'processing', waiting: 'suspended', idle: 'active', closed: 'closed' });
  });

  it('the built-in loading messages fit Slack (at most ten, short)', () => {
    expect(DEFAULT_LOADING_MESSAGES.length).toBeGreaterThan(0);
    expect(DEFAULT_LOADING_MESSAGES.length).toBeLessThanOrEqual(10);
    for (const line of DEFAULT_LOADING_MESSAGES) expect(line.length).toBeLessThanOrEqual(40);
  });
});

describe('sessionTitle', () => {
  it('turns Slack markup into the words it shows, with broadcasts inert', () => {
    const title = sessionTitle(
      'ask <@U0ADA|ada> and <@U0BOB> in <#C0OPS|ops> or <#C0DEV>, <!here> <!channel> <!everyone> <!subteam^S0SRE|@sre>, see <https://example.com|the docs> or <https://x.example>',
    );
    expect(title).toBe(
      'ask @ada and @U0BOB in #ops or #C0DEV, @\u2060here @\u2060channel @\u2060everyone @sre, see the docs or https://x.example',
    );
    expect(title).not.toMatch(/<[@!#]/);
    expect(isBroadcastFree(title, 'slack-plain')).toBe(true);
    expect(isBroadcastFree(title, 'slack-mrkdwn')).toBe(true);
  });

  it('leaves no stray bracket markup and folds the request onto one line', () => {
    expect(sessionTitle('  fix <this>\n\nand   that\t ')).toBe('fix ‹this› and that');
  });

  it('is at most 200 characters, cut with an ellipsis, never inside a surrogate pair', () => {
    expect(sessionTitle('a'.repeat(TITLE_LIMIT))).toHaveLength(TITLE_LIMIT);
    const long = sessionTitle('word '.repeat(100));
    expect(long.length).toBeLessThanOrEqual(TITLE_LIMIT);
    expect(long.endsWith('…')).toBe(true);
    const emoji = sessionTitle('😀'.repeat(150));
    expect(emoji.length).toBeLessThanOrEqual(TITLE_LIMIT);
    expect(emoji.endsWith('😀…')).toBe(true);
    // Broadcast words made inert grow the text (a word joiner each): the cap holds after that.
    expect(sessionTitle('@here '.repeat(60)).length).toBeLessThanOrEqual(TITLE_LIMIT);
  });

  it('is empty when the request has no words', () => {
    expect(sessionTitle(' \n\t ')).toBe('');
  });
});
