// run_shell: the model's shell, as a tool. The mechanics (process groups, the persistent
// cwd, stopping) live in shell-session.ts; this file is the contract the model sees.
//
// One idea: the result always says where the shell is now and how the command ended —
// exit code, timeout or interruption — next to its (middle-trimmed) output, so the model
// never has to guess whether a silent command worked.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import type { ShellSession } from './shell-session.js';

const schema = z.object({
  command: z
    .string()
    .min(1)
    .describe('A bash command line. Runs in the current working directory, which persists between calls (cd works).'),
});

export function runShellTool(shell: ShellSession, timeoutMs: number): ToolDefinition {
  return defineTool({
    name: 'run_shell',
    description:
      `Run a bash command in the workspace and return its exit code, working directory and output (stdout and stderr ` +
      `together; long output loses its middle). The working directory persists between calls but cannot leave the ` +
      `workspace. Commands time out after ${Math.round(timeoutMs / 1000)} s; stdin is empty, so nothing can prompt. ` +
      `Background jobs (&) keep running until the session ends.`,
    schema,
    metadata: { risk: 'high', category: 'exec', idempotent: false },
    commandOf: ({ command }) => command,
    async execute({ command }, { signal }) {
      const result = await shell.run(command, { signal, timeoutMs });
      const answer: Record<string, unknown> = { exitCode: result.exitCode, cwd: result.cwd };
      if (result.signal) answer.signal = result.signal;
      if (result.timedOut) answer.timedOut = true;
      if (result.interrupted) answer.interrupted = true;
      if (result.notes.length > 0) answer.note = result.notes.join('; ');
      answer.output = result.output;
      return answer;
    },
  });
}
