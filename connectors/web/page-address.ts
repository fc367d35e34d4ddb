// The page's address across restarts: the port the last run listened on is kept in the store,
// and with PLAYGROUND_PORT unset (0) the next run tries it first, so the address stays the
// same. The access token is new at each start (access-token.ts): a tab left open then says
// the playground was restarted and where its new address is (page/app.js); with
// PLAYGROUND_TOKEN fixed it reconnects by itself. When that port is taken, any free one is
// used and printed; the open tab cannot learn it, and its live stream, answered by whatever
// holds the old port now, tells it so.
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
