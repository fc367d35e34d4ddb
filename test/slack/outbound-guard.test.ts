import { describe, expect, it } from 'vitest';
import type { FetchFunction } from '@slack/web-api';
import { WORD_JOINER as J } from '../../connectors/shared/mentions.js';
import { guardBody, guardedFetch, guardSlackArguments } from '../../connectors/slack/outbound-guard.js';

/** A body as WebClient.serializeBody sends it: form fields, non-scalars as JSON. */
function form(args: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(args))
    params.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  return params.toString();
}

function decodeForm(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) out[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  return out;
}

describe('the outbound guard', () => {
  it('makes every text of a card inert and keeps its ids, values and metadata byte for byte', () => {
    const value = JSON.stringify({ item: 'i1', choice: '@here <!channel>' });
    const args = {
      channel: 'C1',
      thread_ts: '1.2',
      text: 'Running: run_shell echo <!channel>',
      metadata: { event_type: 'agent_tool_card', event_payload: { tool_call_id: '<!here>' } },
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: '*run_shell* `echo <!everyone>`' } },
        {
          type: 'context',
          elements: [
            { type: 'mrkdwn', text: 'asked by <@U1> for @here' },
            { type: 'plain_text', text: '<!here|here>' },
          ],
        },
        { type: 'section', fields: [{ type: 'mrkdwn', text: '<!subteam^S1|@ops>' }] },
        {
          type: 'actions',
          block_id: 'prompt:<!channel>',
          elements: [
            {
              type: 'button',
              text: { type: 'plain_text', text: 'Say @everyone' },
              action_id: 'agent_prompt:@here',
              value,
              url: 'https://example.com/@here',
            },
          ],
        },
        { type: 'markdown', text: 'done <!channel> &lt;!here&gt;' },
        {
          type: 'rich_text',
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'broadcast', range: 'channel' },
                { type: 'usergroup', usergroup_id: 'S1' },
                { type: 'user', user_id: 'U1' },
                { type: 'text', text: ' <!here>' },
              ],
            },
          ],
        },
      ],
    };
    const guarded = decodeForm(guardBody(form(args), 'application/x-www-form-urlencoded'));
    expect(guarded.channel).toBe('C1');
    expect(guarded.text).toBe('Running: run_shell echo &lt;!channel&gt;');
    expect(guarded.metadata).toEqual(args.metadata);
    const blocks = guarded.blocks as typeof args.blocks;
    expect(blocks[0]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: '*run_shell* `echo &lt;!everyone&gt;`' },
    });
    expect(blocks[1]!.elements).toEqual([
      { type: 'mrkdwn', text: `asked by <@U1> for @${J}here` },
      { type: 'plain_text', text: `<${J}!here|here>` },
    ]);
    expect(blocks[2]!.fields).toEqual([{ type: 'mrkdwn', text: '&lt;!subteam^S1|@ops&gt;' }]);
    expect(blocks[3]).toEqual({
      ...args.blocks[3],
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: `Say @${J}everyone` },
          action_id: 'agent_prompt:@here',
          value,
          url: 'https://example.com/@here',
        },
      ],
    });
    expect(blocks[4]).toEqual({ type: 'markdown', text: `done <${J}!channel> &lt;${J}!here&gt;` });
    expect(blocks[5]!.elements![0]).toEqual({
      type: 'rich_text_section',
      elements: [
        { type: 'text', text: `@${J}channel` },
        { type: 'text', text: `@${J}S1` },
        { type: 'user', user_id: 'U1' },
        { type: 'text', text: ` <${J}!here>` },
      ],
    });
  });

  it('streams: markdown_text and chunks get the markdown rule', () => {
    const guarded = decodeForm(
      guardBody(
        form({
          channel: 'C1',
          ts: '1.2',
          markdown_text: 'Hi <!channel> @here',
          chunks: [
            { type: 'markdown_text', text: '&lt;!everyone&gt;' },
            { type: 'task_update', id: 't1', title: '@channel' },
          ],
        }),
      ),
    );
    expect(guarded.markdown_text).toBe(`Hi <${J}!channel> @${J}here`);
    expect(guarded.chunks).toEqual([
      { type: 'markdown_text', text: `&lt;${J}!everyone&gt;` },
      { type: 'task_update', id: 't1', title: `@${J}channel` },
    ]);
  });

  it('streams: a piece ending in half a broadcast is sealed, so the next append cannot complete it', () => {
    const first = decodeForm(
      guardBody(form({ channel: 'C1', thread_ts: '1.2', markdown_text: 'Heads up <!cha' }), '', 'chat.startStream'),
    );
    const second = decodeForm(
      guardBody(form({ channel: 'C1', ts: '1.3', markdown_text: 'nnel> and @' }), '', 'chat.appendStream'),
    );
    const third = decodeForm(
      guardBody(form({ channel: 'C1', ts: '1.3', markdown_text: 'here' }), '', 'chat.stopStream'),
    );
    const shown = `${first.markdown_text as string}${second.markdown_text as string}${third.markdown_text as string}`;
    expect(shown).toBe(`Heads up <!cha${J}nnel> and @${J}here`);
    const chunks = decodeForm(
      guardBody(
        form({
          channel: 'C1',
          ts: '1.3',
          chunks: [
            { type: 'markdown_text', text: 'x <' },
            { type: 'markdown_text', text: '!here>' },
          ],
        }),
        '',
        'chat.appendStream',
      ),
    );
    expect(chunks.chunks).toEqual([
      { type: 'markdown_text', text: `x <${J}` },
      { type: 'markdown_text', text: '!here>' },
    ]);
  });

  it('modals: every text of a view, but not its callback id or private metadata', () => {
    const view = {
      type: 'modal',
      callback_id: 'cb<!here>',
      private_metadata: '{"who":"<!channel>"}',
      title: { type: 'plain_text', text: 'Full <!channel>' },
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'See <!everyone>' } }],
    };
    const guarded = decodeForm(guardBody(form({ trigger_id: 'tr1', view }))).view as typeof view;
    expect(guarded.callback_id).toBe(view.callback_id);
    expect(guarded.private_metadata).toBe(view.private_metadata);
    expect(guarded.title.text).toBe(`Full <${J}!channel>`);
    expect(guarded.blocks[0]!.text.text).toBe('See &lt;!everyone&gt;');
  });

  it('attachments are mrkdwn, and a field value there is text', () => {
    const guarded = guardSlackArguments({
      attachments: [
        {
          fallback: '<!here>',
          text: '<!channel>',
          fields: [{ title: '@here', value: '<!everyone>', short: true }],
          actions: [{ name: 'x', value: '<!here>' }],
        },
      ],
    });
    expect(guarded.attachments).toEqual([
      {
        fallback: '&lt;!here&gt;',
        text: '&lt;!channel&gt;',
        fields: [{ title: `@${J}here`, value: '&lt;!everyone&gt;', short: true }],
        actions: [{ name: 'x', value: '<!here>' }],
      },
    ]);
  });

  it('respond(): a JSON body to a response_url is guarded the same way', () => {
    const body = JSON.stringify({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'Model set to openai:<!channel>',
    });
    expect(JSON.parse(guardBody(body, 'application/json'))).toEqual({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'Model set to openai:&lt;!channel&gt;',
    });
  });

  it('an upload: text fields are guarded, the file bytes are not touched', async () => {
    const body = new FormData();
    body.append('channels', 'C1');
    body.append('initial_comment', 'log for <!channel>');
    body.append('file', new Blob(['<!channel> stays in the file']), 'log.txt');
    const guarded = guardBody(body);
    expect(guarded.get('initial_comment')).toBe('log for &lt;!channel&gt;');
    const file = guarded.get('file') as File;
    expect(file.name).toBe('log.txt');
    expect(await file.text()).toBe('<!channel> stays in the file');
  });

  it('a body with nothing to neutralise goes out as it came, and a guarded one is not changed twice', () => {
    const clean = form({
      channel: 'C1',
      text: 'all good, ask <@U1>',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'fine' } }],
    });
    expect(guardBody(clean)).toBe(clean);
    const once = guardBody(form({ text: '<!here> @channel', markdown_text: '<!everyone>' }));
    expect(guardBody(once)).toBe(once);
  });

  it('guardedFetch hands the guarded body to the real fetch, with the rest of the request as it was', async () => {
    const seen: { url: string; init: Parameters<FetchFunction>[1] }[] = [];
    const inner: FetchFunction = async (url, init) => {
      seen.push({ url: String(url), init });
      return new Response('{"ok":true}');
    };
    const signal = new AbortController().signal;
    await guardedFetch(inner)('https://slack.test/api/chat.postMessage', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form({ channel: 'C1', text: '<!channel>' }),
      redirect: 'error',
      signal,
    });
    expect(seen[0]!.url).toBe('https://slack.test/api/chat.postMessage');
    expect(seen[0]!.init).toMatchObject({ method: 'POST', redirect: 'error', signal });
    expect(decodeForm(seen[0]!.init!.body as string)).toEqual({ channel: 'C1', text: '&lt;!channel&gt;' });
  });
});
