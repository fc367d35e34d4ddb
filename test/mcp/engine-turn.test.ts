// MCP tools inside a real TurnEngine turn: the stdio notes server, a scripted model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionRequest, ToolDefinition } from '../../src/engine/index.js';
import { McpManager } from '../../src/mcp/index.js';
import { parseMcpConfig } from '../../src/mcp/config.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, memoryLogger, only, waitFor } from '../support/engine-kit.js';
import { notesServerEntry } from './fixtures/launch.js';
import { cancelledOnServer, eventually } from './mcp-kit.js';

describe('MCP tools in a turn', () => {
  const logger = memoryLogger();
  const manager = new McpManager({ logger });
  let tools: ToolDefinition[];

  beforeAll(async () => {
    const report = await manager.start(parseMcpConfig({ mcpServers: { notes: notesServerEntry() } }));
    expect(report.failures).toEqual([]);
    tools = manager.tools();
  });
  afterAll(() => manager.close());

  it('read-only calls run at once and side by side; destructive and open-world calls ask first', async () => {
    const asked: PermissionRequest[] = [];
    const { engine, provider } = engineWith(
      [
        callTools(
          call('notes__slow', { ms: 1_000, label: 'beside-add' }),
          call('notes__add', { a: 2, b: 3 }),
          call('notes__delete_note', { id: 'n-2' }),
          call('notes__fetch_thing', { url: 'https://example.com/secret' }),
        ),
        say('2 + 3 is 5, and the note is gone.'),
      ],
      {
        tools,
        ports: {
          approver: async (request) => {
            asked.push(request);
            return request.toolName === 'notes__delete_note' ? 'once' : 'deny';
          },
        },
      },
    );

    const events = await collect(engine.run('add 2 and 3, then delete note n-2'));

    // The model was offered the server's tools with the server's own argument schemas.
    const offered = provider.requests[0]!.tools.find((tool) => tool.name === 'notes__add');
    expect(offered).toMatchObject({
      description: 'Add two numbers',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number', description: 'first addend' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
    });

    // Only the destructive and the open-world call were put to the user.
    expect(asked.map((request) => [request.toolName, request.metadata?.risk, request.metadata?.category])).toEqual([
      ['notes__delete_note', 'high', 'write'],
      ['notes__fetch_thing', 'high', 'external'],
    ]);
    expect(only(events, 'permission_required').map((event) => event.name)).toEqual([
      'notes__delete_note',
      'notes__fetch_thing',
    ]);

    // The denial is answered while authorizing, before anything runs. Then the two reads
    // ran side by side (the quick one finished while the slow one still ran), then the write.
    const toolFlow = events
      .filter((event) => event.type === 'tool_started' || event.type === 'tool_finished')
      .map((event) => `${event.type === 'tool_started' ? 'start' : 'end'}:${'name' in event ? event.name : ''}`);
    expect(toolFlow).toEqual([
      'end:notes__fetch_thing',
      'start:notes__slow',
      'start:notes__add',
      'end:notes__add',
      'end:notes__slow',
      'start:notes__delete_note',
      'end:notes__delete_note',
    ]);

    const finished = Object.fromEntries(
      only(events, 'tool_finished').map((event) => [event.name, [event.status, event.resultPreview]]),
    );
    expect(finished).toEqual({
      notes__add: ['ok', '5'],
      notes__slow: ['ok', 'waited 1000 ms'],
      notes__delete_note: ['ok', 'deleted n-2'],
      notes__fetch_thing: ['denied', expect.stringContaining('denied by user')],
    });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });

  it('an isError result reaches the model as a failed tool call', async () => {
    const { engine } = engineWith([callTools(call('notes__fail')), say('The disk is full.')], { tools });
    const events = await collect(engine.run('try it'));
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'notes__fail', status: 'error' });
    const result = engine.messages.find((message) => message.role === 'tool')!;
    expect(JSON.parse(result.content)).toEqual({
      error: 'notes/fail reported an error: the disk is full',
      error_type: 'McpToolError',
    });
  });

  it('a stop during an MCP call ends the turn and cancels the call on the server', async () => {
    const { engine } = engineWith([callTools(call('notes__slow', { ms: 60_000, label: 'turn-stop' }))], { tools });
    const turn = collect(engine.run('wait a minute'));
    await waitFor(() =>
      logger.lines.some((line) => (line.details as { stderr?: string }).stderr === 'slow started: turn-stop'),
    );
    engine.requestInterrupt();
    const events = await turn;
    expect(only(events, 'tool_finished')[0]).toMatchObject({ name: 'notes__slow', status: 'interrupted' });
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'interrupted' });

    await eventually(async () => (await cancelledOnServer(tools, 'notes__cancellations')).includes('turn-stop'));
  });
});
