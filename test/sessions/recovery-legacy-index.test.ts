// A store written by a version before the open-sessions index (a single process on SQLite):
// recovery scans every session once and builds the index. Not a case in cluster mode, whose
// index is a Redis set from the start (so this file is not in the sessions-on-redis project).
import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../fakes/scripted-provider.js';
import { Restarts } from '../support/restarts.js';

const restarts = new Restarts();
afterEach(() => restarts.cleanup());

describe('recovery on a store from before the open index', () => {
  it('a store written before the open index existed is scanned once, and the index is built', async () => {
    const url = await restarts.storeFile();
    const first = await restarts.boot(url, [say('hi')], []);
    await first.bot.say('T1', 'U1', 'hello');
    await first.bot.manager.idle();
    await first.bot.store.keyv.delete('open-sessions'); // as an older version left it
    await first.bot.stop();

    const second = await restarts.boot(url, [], []);
    expect(await second.bot.manager.recover()).toMatchObject({ examined: 1, settled: [second.bot.sessionId('T1')] });
    const third = await restarts.boot(url, [], []);
    expect(await third.bot.manager.recover()).toMatchObject({ examined: 0 });
  });
});
