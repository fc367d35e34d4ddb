import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineTool,
  type ApprovalOutcome,
  type PermissionPolicy,
  type PermissionRequest,
  type ToolDefinition,
} from '../../src/engine/index.js';
import { call, callTools, say } from '../fakes/scripted-provider.js';
import { collect, engineWith, lowRisk, only, recordingTool, risky, shellTool } from '../support/engine-kit.js';

/** A barrier: resolves once `size` parties arrived, so a test can prove calls overlap. */
function barrier(size: number, timeoutMs = 2000) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return async (): Promise<boolean> => {
    arrived++;
    if (arrived >= size) open();
    const timedOut = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
    return Promise.race([opened.then(() => true), timedOut]);
  };
}

function barrierTool(
  name: string,
  metadata: ToolDefinition['metadata'],
  wait: () => Promise<boolean>,
  log: string[],
): ToolDefinition {
  return defineTool({
    name,
    description: name,
    schema: z.object({}).passthrough(),
    metadata,
    async execute() {
      log.push(`start:${name}`);
      const overlapped = await wait();
      log.push(`end:${name}`);
      return { overlapped };
    },
  });
}

describe('authorize every call first, then execute', () => {
  it('asks for every approval in the batch before any tool runs', async () => {
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('write_a'), call('write_b')), say('done')], {
      tools: [recordingTool('write_a', risky, { log }), recordingTool('write_b', risky, { log })],
      ports: {
        approver: async ({ toolName }) => {
          log.push(`ask:${toolName}`);
          return 'once';
        },
      },
    });
    await collect(engine.run('go'));
    expect(log).toEqual(['ask:write_a', 'ask:write_b', 'start:write_a', 'end:write_a', 'start:write_b', 'end:write_b']);
  });

  it('runs several low-risk calls that need no approval concurrently', async () => {
    const log: string[] = [];
    const meet = barrier(3);
    const tools = ['grep', 'read', 'list'].map((name) => barrierTool(name, lowRisk, meet, log));
    const { engine } = engineWith([callTools(call('grep'), call('read'), call('list')), say('done')], { tools });
    const events = await collect(engine.run('explore'));
    const results = engine.messages
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content) as { overlapped: boolean });
    expect(results).toEqual([{ overlapped: true }, { overlapped: true }, { overlapped: true }]);
    // All started before any finished.
    expect(log.slice(0, 3).every((entry) => entry.startsWith('start:'))).toBe(true);
    expect(only(events, 'tool_started')).toHaveLength(3);
  });

  it('a wide batch of concurrent tools raises no listener warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const names = Array.from({ length: 12 }, (_, i) => `read_${i}`);
      const { engine } = engineWith([callTools(...names.map((n) => call(n))), say('done')], {
        tools: names.map((n) => recordingTool(n, lowRisk, { delayMs: 5 })),
      });
      await collect(engine.run('read everything'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('runs medium-risk, approved and unannotated calls one at a time, in call order', async () => {
    const log: string[] = [];
    const meet = barrier(2, 50);
    const tools = [
      barrierTool('edit', { risk: 'medium' }, meet, log),
      barrierTool('mystery', undefined, meet, log),
      barrierTool('always_asks', { risk: 'low', requiresApproval: true }, meet, log),
    ];
    const { engine } = engineWith([callTools(call('edit'), call('mystery'), call('always_asks')), say('done')], {
      tools,
      ports: { approver: async () => 'once' },
    });
    await collect(engine.run('go'));
    expect(log).toEqual([
      'start:edit',
      'end:edit',
      'start:mystery',
      'end:mystery',
      'start:always_asks',
      'end:always_asks',
    ]);
    // The first call waited for a partner in vain: nothing ran beside it.
    const first = engine.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(first.content)).toEqual({ overlapped: false });
  });

  it('keeps call order across a write: reads after it wait for it', async () => {
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('read_a'), call('write'), call('read_b')), say('done')], {
      tools: [
        recordingTool('read_a', lowRisk, { log, delayMs: 5 }),
        recordingTool('write', risky, { log }),
        recordingTool('read_b', lowRisk, { log }),
      ],
      ports: { approver: async () => 'once' },
    });
    await collect(engine.run('go'));
    expect(log).toEqual(['start:read_a', 'end:read_a', 'start:write', 'end:write', 'start:read_b', 'end:read_b']);
  });

  it('reports tool cards in order: proposed, (permission), started, finished with duration and preview', async () => {
    const { engine } = engineWith([callTools(call('write', { text: 'line one\nline two' })), say('done')], {
      tools: [recordingTool('write', risky)],
      ports: { approver: async () => 'once' },
    });
    const events = await collect(engine.run('go'));
    const card = events.filter((e) => 'toolCallId' in e).map((e) => e.type);
    expect(card).toEqual(['tool_proposed', 'permission_required', 'tool_started', 'tool_finished']);
    const finished = only(events, 'tool_finished')[0]!;
    expect(finished.status).toBe('ok');
    expect(finished.durationMs).toBeGreaterThanOrEqual(0);
    expect(finished.resultPreview).toContain('line one\\nline two');
    expect(finished.resultPreview).not.toContain('\n');
  });

  it('lifts a _display result key off for people only; the model never sees it', async () => {
    const filtered = defineTool({
      name: 'search_mail',
      description: 'search',
      schema: z.object({}),
      metadata: lowRisk,
      execute: async () => ({ hits: ['a'], _display: { hiddenByPrivacyFilter: 3 } }),
    });
    const { engine, provider } = engineWith([callTools(call('search_mail')), say('done')], { tools: [filtered] });
    const events = await collect(engine.run('find'));
    expect(only(events, 'tool_finished')[0]!.display).toEqual({ hiddenByPrivacyFilter: 3 });
    expect(engine.messages[2]).toMatchObject({
      role: 'tool',
      content: '{"hits":["a"]}',
      _display: { hiddenByPrivacyFilter: 3 },
    });
    expect(JSON.stringify(provider.requests[1])).not.toContain('hiddenByPrivacyFilter');
  });
});

describe('approvals', () => {
  it('the default approver denies everything that needs a human', async () => {
    const log: string[] = [];
    const { engine } = engineWith([callTools(call('write')), say('ok, I will not')], {
      tools: [recordingTool('write', risky, { log })],
    });
    const events = await collect(engine.run('go'));
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'denied' });
    expect(engine.messages[2]!).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('denied by user') as unknown,
    });
  });

  it('a request carries the tool name, arguments, metadata, reason and tool_call_id', async () => {
    const requests: PermissionRequest[] = [];
    const { engine } = engineWith([callTools(call('write', { path: 'a.txt' }, 'call_w')), say('done')], {
      tools: [recordingTool('write', risky)],
      ports: {
        approver: async (request) => {
          requests.push(request);
          return 'deny';
        },
      },
    });
    const events = await collect(engine.run('go'));
    expect(requests[0]).toMatchObject({
      toolName: 'write',
      arguments: { path: 'a.txt' },
      metadata: risky,
      reason: 'write is high-risk',
      toolCallId: 'call_w',
      sessionId: 'session-1',
    });
    expect(only(events, 'permission_required')[0]).toMatchObject({
      toolCallId: 'call_w',
      reason: 'write is high-risk',
    });
  });

  it('remembers "always allow this tool" for the session', async () => {
    let asked = 0;
    const grantsSeen: unknown[] = [];
    const { engine } = engineWith(
      [callTools(call('write', { n: 1 })), say('one'), callTools(call('write', { n: 2 })), say('two')],
      {
        tools: [recordingTool('write', risky)],
        ports: {
          approver: async () => {
            asked++;
            return 'always_tool';
          },
        },
        hooks: {
          onGrantsChanged: (grants) => {
            grantsSeen.push(grants);
          },
        },
      },
    );
    await collect(engine.run('first'));
    await collect(engine.run('second'));
    expect(asked).toBe(1);
    expect(engine.grantsSnapshot).toEqual({ tools: [{ tool: 'write' }], commands: [] });
    expect(grantsSeen).toEqual([{ tools: [{ tool: 'write' }], commands: [] }]);
  });

  it('a grant belongs to whoever gave it: it covers their next turn, not a turn someone else asked for or steered', async () => {
    const asked: string[] = [];
    const { engine } = engineWith(
      [
        callTools(call('write', { n: 1 })),
        say('one'),
        callTools(call('write', { n: 2 })),
        say('two'),
        callTools(call('write', { n: 3 })),
        say('three'),
      ],
      {
        tools: [recordingTool('write', risky)],
        ports: {
          approver: async (request) => {
            asked.push(request.toolCallId);
            return { outcome: 'always_tool', by: 'U_ADA' };
          },
        },
      },
    );
    const from = (userId: string) => ({ source: { platform: 'test', userId } });
    await collect(engine.run('first', from('U_ADA')));
    expect(engine.grantsSnapshot).toEqual({ tools: [{ tool: 'write', by: 'U_ADA' }], commands: [] });
    await collect(engine.run('second', from('U_ADA')));
    expect(asked).toHaveLength(1); // Ada's own turn: covered
    await collect(engine.run('third', from('U_BOB')));
    expect(asked).toHaveLength(2); // Bob's turn: asked again
  });

  it('remembers "always allow this command" for that exact command only', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const { engine } = engineWith(
      [
        callTools(call('run_shell', { command: 'npm test' })),
        callTools(call('run_shell', { command: 'npm test' })),
        callTools(call('run_shell', { command: 'rm -rf /' })),
        say('done'),
      ],
      {
        tools: [shellTool(ran)],
        ports: {
          approver: async ({ command }) => {
            asked.push(command ?? '');
            return command === 'npm test' ? 'always_command' : 'deny';
          },
        },
      },
    );
    const events = await collect(engine.run('go'));
    expect(asked).toEqual(['npm test', 'rm -rf /']);
    expect(ran).toEqual(['npm test', 'npm test']);
    expect(only(events, 'permission_required')[0]).toMatchObject({ command: 'npm test' });
    expect(engine.grantsSnapshot.commands).toEqual([{ tool: 'run_shell', command: 'npm test' }]);
  });

  it('a denial can carry a note the model reads (a reply instead of a click)', async () => {
    const { engine } = engineWith([callTools(call('write')), say('ok')], {
      tools: [recordingTool('write', risky)],
      ports: {
        approver: async () => ({ outcome: 'deny', note: 'the user replied instead of approving: "use staging"' }),
      },
    });
    const events = await collect(engine.run('go'));
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'denied' });
    expect(engine.messages[2]).toMatchObject({
      content: expect.stringContaining('the user replied instead of approving: \\"use staging\\"'),
    });
  });

  it('restores grants given at construction (a reloaded session)', async () => {
    let asked = 0;
    const { engine } = engineWith([callTools(call('write')), say('done')], {
      tools: [recordingTool('write', risky)],
      // A grant from an approver that names nobody covers a turn with no named author.
      grants: { tools: [{ tool: 'write' }], commands: [] },
      ports: {
        approver: async () => {
          asked++;
          return 'deny';
        },
      },
    });
    await collect(engine.run('go'));
    expect(asked).toBe(0);
  });

  it('fails closed: an approver that throws or answers outside the vocabulary denies', async () => {
    const log: string[] = [];
    const answers: (() => Promise<ApprovalOutcome>)[] = [
      async () => {
        throw new Error('card could not be posted');
      },
      async () => 'yes please' as ApprovalOutcome,
    ];
    const { engine } = engineWith([callTools(call('write'), call('write')), say('done')], {
      tools: [recordingTool('write', risky, { log })],
      ports: { approver: () => answers.shift()!() },
    });
    const events = await collect(engine.run('go'));
    expect(log).toEqual([]);
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['denied', 'denied']);
  });

  it('consults the policy per call: deny refuses without asking, allow runs without asking', async () => {
    const asked: string[] = [];
    const log: string[] = [];
    const policy: PermissionPolicy = {
      evaluate: ({ tool }) =>
        tool.name === 'forbidden'
          ? { decision: 'deny', reason: 'read-only mode: forbidden is not allowed' }
          : { decision: 'allow' },
    };
    const { engine } = engineWith([callTools(call('forbidden'), call('fine')), say('done')], {
      tools: [recordingTool('forbidden', risky, { log }), recordingTool('fine', risky, { log })],
      ports: {
        policy,
        approver: async ({ toolName }) => {
          asked.push(toolName);
          return 'once';
        },
      },
    });
    const events = await collect(engine.run('go'));
    expect(asked).toEqual([]);
    expect(log).toEqual(['start:fine', 'end:fine']);
    expect(only(events, 'tool_finished').map((e) => [e.name, e.status])).toEqual([
      ['forbidden', 'denied'],
      ['fine', 'ok'],
    ]);
    expect(engine.messages[2]).toMatchObject({ content: expect.stringContaining('read-only mode') as unknown });
  });
});

describe('interactive tools are answered through callbacks', () => {
  it('ask_user, propose_plan and request_directory skip the permission path and return the answer', async () => {
    let approverCalls = 0;
    const { engine, provider } = engineWith(
      [
        callTools(
          call('ask_user', { question: 'Which env?', options: ['staging', 'prod'] }),
          call('propose_plan', { plan: '1. build\n2. deploy' }),
          call('request_directory', { path: '/srv/app', reason: 'deploy there', writable: true }),
        ),
        say('thanks'),
      ],
      {
        ports: {
          approver: async () => {
            approverCalls++;
            return 'deny';
          },
          interactive: {
            askUser: async ({ question, options }) => ({ answer: `${question} -> ${options?.[0]}` }),
            proposePlan: async () => ({ approved: true }),
            requestDirectory: async ({ path }) => ({ granted: true, path }),
          },
        },
      },
    );
    const events = await collect(engine.run('deploy it'));
    expect(approverCalls).toBe(0);
    expect(only(events, 'interaction_required').map((e) => e.kind)).toEqual(['question', 'plan', 'directory']);
    expect(engine.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as unknown)).toEqual([
      { answer: 'Which env? -> staging' },
      { approved: true },
      { granted: true, path: '/srv/app' },
    ]);
    // Only the tools this surface can answer are offered to the model.
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(['ask_user', 'propose_plan', 'request_directory']);
  });

  it('without a callback the model gets a clear "not available here" error', async () => {
    const { engine, provider } = engineWith([callTools(call('ask_user', { question: 'hm?' })), say('ok')]);
    const events = await collect(engine.run('go'));
    expect(only(events, 'tool_finished')[0]).toMatchObject({ status: 'error' });
    expect(engine.messages[2]).toMatchObject({
      content: expect.stringContaining('ask_user is not available here') as unknown,
    });
    expect(provider.requests[0]!.tools).toEqual([]);
  });

  it('invalid interactive arguments and a failing callback become tool errors', async () => {
    const { engine } = engineWith(
      [callTools(call('ask_user', { nope: 1 }), call('propose_plan', { plan: 'x' })), say('ok')],
      {
        ports: {
          interactive: {
            askUser: async () => ({ answer: 'never' }),
            proposePlan: async () => {
              throw new Error('card failed');
            },
          },
        },
      },
    );
    const events = await collect(engine.run('go'));
    expect(only(events, 'tool_finished').map((e) => e.status)).toEqual(['error', 'error']);
    const contents = engine.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(contents[0]).toContain('invalid arguments for ask_user');
    expect(contents[1]).toContain('propose_plan failed: card failed');
    expect(only(events, 'turn_end')[0]).toMatchObject({ status: 'completed' });
  });
});

describe('a response with more tool calls than may run', () => {
  it('runs the first ones, answers the rest with an error the model can act on, and says so once', async () => {
    const log: string[] = [];
    const calls = Array.from({ length: 300 }, (_unused, i) => call('read', { n: i }));
    const { engine, provider } = engineWith([callTools(...calls), say('fewer next time')], {
      tools: [recordingTool('read', lowRisk, { log })],
      limits: { maxToolCallsPerResponse: 20 },
    });
    const events = await collect(engine.run('read everything'));
    expect(only(events, 'tool_calls_limited')).toEqual([{ type: 'tool_calls_limited', requested: 300, allowed: 20 }]);
    expect(only(events, 'tool_proposed')).toHaveLength(20); // one card per call that runs, not 300
    expect(log.filter((entry) => entry.startsWith('end:'))).toHaveLength(20);
    // The model got an answer to every call, in order: 20 results, then 280 refusals.
    const results = provider.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(results).toHaveLength(300);
    expect(String(results[19]!.content)).toContain('"ok":true');
    expect(String(results[20]!.content)).toContain('at most 20 run per response; send fewer at a time');
  });
});
