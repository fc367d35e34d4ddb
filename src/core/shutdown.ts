// How the core stops: `suspend` for a restart (a deploy) leaves every turn in flight where a
// crash would leave it, for the next start to carry on; `close` then releases everything, in
// the reverse order of the start. Without a suspend, `close` stops the turns first.
import type { EngineLogger } from '../engine/index.js';
import type { McpManager } from '../mcp/index.js';
import type { OpsBus } from '../ops/ops-events.js';
import type { ProfileWatch } from '../profiles/profile-watch.js';
import type { ShellStartup } from '../sandbox/shell-startup.js';
import type { ScheduleSetup } from '../schedules/schedule-setup.js';
import type { ObserverHub } from '../sessions/observer-hub.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { CoreStorage } from './storage.js';

export interface ShutdownParts {
  storage: CoreStorage;
  shell: ShellStartup;
  manager: SessionManager;
  observers: ObserverHub;
  schedules: ScheduleSetup;
  mcp: McpManager;
  ops: OpsBus;
  profileWatch: ProfileWatch | undefined;
  stopRetentionSweeps: () => void;
  logger: EngineLogger;
}

export function coreShutdown(parts: ShutdownParts): { suspend(): Promise<number>; close(): Promise<void> } {
  const { storage, shell, manager, observers, schedules, logger } = parts;
  const { fence, cluster, opened } = storage;
  let closed = false;
  let suspended = false;
  return {
    suspend: async () => {
      if (suspended || closed) return 0;
      suspended = true;
      await schedules.close();
      const working = await manager.beginSuspend();
      observers.mute();
      fence.close('the bot is shutting down');
      // Cluster mode: another instance takes these sessions at its next sweep, not a lease later.
      await cluster?.handOver();
      for (const { record, waitingForAnswer } of working) {
        try {
          await observers.onSuspend(record, waitingForAnswer);
        } catch (error) {
          logger.warn({ err: error, sessionId: record.id }, 'could not say in the thread that the bot restarts');
        }
      }
      await manager.releaseTools();
      return working.length;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await parts.profileWatch?.stop();
      parts.stopRetentionSweeps();
      // After a suspend the turns are left as they are (the store is fenced); else they stop.
      await schedules.close();
      if (!suspended) await manager.shutdown();
      await parts.mcp.close();
      await parts.ops.close();
      await cluster?.close();
      await opened.close();
      // The sessions' commands have ended: the bot's memory cgroup folder is empty now, and
      // the workspace disks it still holds are unmounted (the next start mounts them again).
      if (shell.shell.kind === 'sandbox') shell.shell.sandbox.cgroups?.close();
      await shell.disks?.close();
    },
  };
}
