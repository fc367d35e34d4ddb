// The error a write meets when this process may no longer change a session's state: the bot
// is shutting down (its store is fenced the moment the shutdown begins, so what persists is
// exactly what a crash at that instant would have left, which recovery carries on from), or,
// with several instances, another one owns the session now. Whoever meets it stops quietly:
// nothing more is recorded, retried or reported as a failure.
export class WritesFencedError extends Error {
  constructor(reason: string) {
    super(`writes are fenced: ${reason}`);
    this.name = 'WritesFencedError';
  }
}

/** Whether `error` (or what it wraps) is a fenced write. Checked by name: it may cross module copies. */
export function isWritesFenced(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current.name === 'WritesFencedError') return true;
  }
  return false;
}
