// A port the kernel just handed out on 127.0.0.1, and that was released again: for a server
// a test starts later on a known port (a restart that must keep its address), or as a port
// where nothing listens (an unreachable platform).
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port from the kernel');
  return address.port;
}
