// A stand-in for the bot's process, for what only a process's initial environment shows
// (/proc/<pid>/environ is the environment a process was started with; setting process.env
// in a test changes nothing there). Started with the bot's secrets in its environment, it
// builds the shell as the core does and runs each command of its argument, printing the raw
// results as one JSON line: no masking in between, so a leak is seen as it is.
import { botPaths } from '../../src/sandbox/protected-paths.js';
import { decideShellSandbox } from '../../src/sandbox/shell-sandbox.js';
import { shellEnvironment } from '../../src/sandbox/shell-environment.js';
import { createBuiltinTools, type ShellSetup } from '../../src/tools/index.js';

interface Request {
  mode: 'sandbox' | 'host';
  workspace: string;
  botDir: string;
  home: string;
  commands: string[];
}

const request = JSON.parse(process.argv[2] ?? '{}') as Request;
const paths = botPaths({
  storeUrl: 'sqlite://data/bot.sqlite',
  mcpConfig: './mcp.json',
  workingDir: request.botDir,
  homeDir: request.home,
});
let shell: ShellSetup = { kind: 'host' };
if (request.mode === 'sandbox') {
  const decision = await decideShellSandbox({
    mode: 'bwrap',
    network: false,
    workspaceRoot: request.workspace,
    botPaths: paths,
    env: shellEnvironment(process.env, { home: request.workspace }),
  });
  if (decision.kind !== 'sandbox') throw new Error(decision.message);
  shell = { kind: 'sandbox', sandbox: decision.sandbox };
}
const builtin = createBuiltinTools({ workspaceDir: request.workspace, shell });
const runShell = builtin.tools.find((tool) => tool.name === 'run_shell');
if (!runShell) throw new Error('no run_shell');
const results: unknown[] = [];
for (const command of request.commands) {
  results.push(
    await runShell.execute(
      { command },
      { signal: new AbortController().signal, toolCallId: 'call', sessionId: 'session' },
    ),
  );
}
await builtin.dispose();
process.stdout.write(`${JSON.stringify(results)}\n`);
