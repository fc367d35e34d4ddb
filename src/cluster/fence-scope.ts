// Which session's lease the code running now acts under. The cluster coordinator runs every
// piece of work it does for a session (an exclusive section, the turn it starts, a drained
// command) inside `fenceScope.run({ … })`; AsyncLocalStorage carries that through every
// await, timer and callback the work creates. The Redis document store reads it on each
// write: inside a scope a write is done by a Lua script that first checks that the lease
// still holds this token, so a former owner (paused past its lease, partitioned, or simply
// slower than the instance that took over) cannot write; outside any scope (event claims,
// a connector's own records) writes are plain.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface FenceScope {
  sessionId: string;
  /** The Redis key of the session's lease (ClusterKeys.lease). */
  leaseKey: string;
  /** The value the lease must hold for a write to go through: `{node}:{epoch}`. */
  token: string;
}

export const fenceScope = new AsyncLocalStorage<FenceScope>();
