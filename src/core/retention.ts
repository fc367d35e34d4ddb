// RETENTION_DAYS and AUDIT_RETENTION_DAYS: expired sessions and audit records are swept a
// minute after start and every six hours. The sweep reads every session record, which
// start-up must not wait for.
import type { EngineLogger } from '../engine/index.js';
import type { AuditTrail } from '../ops/audit/audit-trail.js';
import type { SessionManager } from '../sessions/session-manager.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_SWEEP_EVERY_MS = 6 * 60 * 60 * 1000;
const RETENTION_FIRST_SWEEP_MS = 60 * 1000;

/** Starts the sweeps; the answer stops them. */
export function startRetentionSweeps(
  retentionDays: number,
  deps: { manager: SessionManager; audit: AuditTrail; logger: EngineLogger },
): () => void {
  const { manager, audit, logger } = deps;
  const sweep = async () => {
    try {
      const deleted = await manager.sweepExpired(retentionDays * DAY_MS);
      if (deleted.length > 0) logger.info({ sessions: deleted.length }, 'deleted sessions past the retention period');
    } catch (error) {
      logger.error({ err: error }, 'retention sweep failed');
    }
    await audit.sweep();
  };
  const firstSweep = setTimeout(() => void sweep(), RETENTION_FIRST_SWEEP_MS);
  firstSweep.unref();
  const sweeper = setInterval(() => void sweep(), RETENTION_SWEEP_EVERY_MS);
  sweeper.unref();
  return () => {
    clearTimeout(firstSweep);
    clearInterval(sweeper);
  };
}
