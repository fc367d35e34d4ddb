// run_shell: the model's shell, as a tool. The mechanics (the persistent cwd, stopping)
// live in shell-session.ts, where it runs in command-launcher.ts and src/sandbox/; this file
// is the contract the model sees, and what its approval card says about confinement.
//
// One idea: the result always says where the shell is now and how the command ended —
// exit code, timeout or interruption — next to its (cleaned, middle-trimmed) output, so the
// model never has to guess whether a silent command worked. Binary output is a count in the
// note, not a dump (command-output.ts).
//
// A command the shell allow-list let through ran without anyone looking at it: it gets a
// hardened git (hardened-git.ts), so the repository's own config cannot make it run programs.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../engine/index.js';
import { hardenedGitEnvironment } from './hardened-git.js';
import type { ShellSession } from './shell-session.js';

const schema = z.object({
  command: z
    .string()
    .min(1)
    .describe('A bash command line. Runs in the current working directory, which persists between calls (cd works).'),
});

/** How commands are confined: decided once at start-up (SHELL_SANDBOX, SHELL_NETWORK). */
export type ShellConfinement = { sandboxed: true; network: boolean } | { sandboxed: false };

/** The sentence an approver reads after "Runs": true, including what is not covered. */
function confinementText(confinement: ShellConfinement): string {
  if (!confinement.sandboxed) {
    return 'WITHOUT a sandbox (SHELL_SANDBOX=off): the command can read and change everything the bot’s user can, the bot’s tokens included';
  }
  const base =
    'in a sandbox: it can write only the workspace and granted folders, and cannot see the bot’s files, data or secrets';
  return confinement.network ? `${base}, but it CAN reach the network (SHELL_NETWORK=on)` : `${base}; no network`;
}

const ALLOW_LISTED_NOTE =
  'allow-listed, so it ran without approval and with a hardened git (no hooks, fsmonitor, filters, diff drivers, helpers or global config; repositories outside the workspace are not found)';

export function runShellTool(shell: ShellSession, timeoutMs: number, confinement: ShellConfinement): ToolDefinition {
  const where = confinement.sandboxed
    ? `It runs in a sandbox: only the workspace${confinement.network ? '' : ', no network'}; ` +
      `each command starts fresh, and background jobs (&) end when the command returns, so start a server and use it in one command.`
    : 'Background jobs (&) keep running until the session ends.';
  return defineTool({
    name: 'run_shell',
    description:
      `Run a bash command in the workspace and return its exit code, working directory and output (stdout and stderr ` +
      `together; long output loses its middle, colour codes are dropped, binary output is counted, not shown). The working directory persists between calls but cannot leave the ` +
      `workspace. Commands time out after ${Math.round(timeoutMs / 1000)} s; stdin is empty, so nothing can prompt. ${where}`,
    schema,
    metadata: { risk: 'high', category: 'exec', idempotent: false, confinement: confinementText(confinement) },
    commandOf: ({ command }) => command,
    async execute({ command }, { signal, approval }) {
      const allowListed = approval?.via === 'allowlist';
      const extraEnv = allowListed ? hardenedGitEnvironment(shell.roots) : undefined;
      const result = await shell.run(command, { signal, timeoutMs, extraEnv });
      const answer: Record<string, unknown> = { exitCode: result.exitCode, cwd: result.cwd };
      if (result.signal) answer.signal = result.signal;
      if (result.timedOut) answer.timedOut = true;
      if (result.interrupted) answer.interrupted = true;
      const notes = [...result.notes];
      // Said, so a git failure caused by the hardening (no hooks, no global config) is understood.
      if (allowListed) notes.push(ALLOW_LISTED_NOTE);
      if (notes.length > 0) answer.note = notes.join('; ');
      answer.output = result.output;
      return answer;
    },
  });
}
