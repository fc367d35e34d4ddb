// The page's address across restarts. The token is kept in the store (access-token.ts); so is
// the port the last run listened on, and with PLAYGROUND_PORT unset (0) the next run tries it
// first: a tab left open on the old address then reconnects by itself instead of saying
// "reconnecting…" to a port nobody listens on any more. When that port is taken, any free
// one is used and printed; the open tab cannot learn it, and its live stream, answered by
// whatever holds the old port now, tells it so (page/app.js).
import type Keyv from 'keyv';
import { z } from 'zod';

const PORT_KEY = 'web:last-port';
const Port = z.number().int().min(1).max(65535);

/** The port the last run of this store's playground listened on, if any. */
export async function lastPort(keyv: Keyv): Promise<number | undefined> {
  const known = Port.safeParse(await keyv.get<unknown>(PORT_KEY));
  return known.success ? known.data : undefined;
}

export async function rememberPort(keyv: Keyv, port: number): Promise<void> {
  await keyv.set(PORT_KEY, port);
}
