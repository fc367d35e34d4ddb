// A person's limits with the bot deployed as several processes: two whole bots (`npm start`'s
// command, test/support/bot-cluster.ts) in Slack HTTP mode on one real redis-server, Slack
// and the model as fakes. Mentions from one person, sent to one instance and then the other,
// count against one TURNS_PER_USER_PER_MINUTE: the one past it is refused privately, whichever
// instance it reaches, and never reaches the model.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai-server.js';
import { appMention, eventCallback, SLACK_IDS } from '../fakes/slack-payloads.js';
import { FakeSlack } from '../fakes/slack-server.js';
import { BotCluster, sleep } from '../support/bot-cluster.js';
import { RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/test-connector.js';

const C = SLACK_IDS.channelId;

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.dispose();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Bounded by the deadline only to end a test that hangs: generous, for a busy machine starting two bots. */
async function until(what: string, predicate: () => boolean, cluster: BotCluster, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}${cluster.story()}`);
    await sleep(25);
  }
}

describe('limits of the whole bot, across processes', () => {
  it(
    'TURNS_PER_USER_PER_MINUTE=2 with two instances: two mentions answered, the third refused privately on either instance',
    { timeout: 120_000 },
    async () => {
      const dir = await tempDir('limits-processes-');
      cleanups.push(dir.remove);
      const slack = await new FakeSlack().start();
      cleanups.push(() => slack.stop());
      const llm = await new FakeOpenAI().start();
      cleanups.push(() => llm.stop());
      const cluster = await BotCluster.start({
        size: 2,
        redis,
        slack,
        llm,
        dir: dir.path,
        env: { TURNS_PER_USER_PER_MINUTE: '2' },
      });
      cleanups.push(() => cluster.dispose());
      llm.replyText('First answer.');
      llm.replyText('Second answer.');

      const mentions = ['one', 'two', 'three', 'four'].map((text) => {
        const event = appMention({ text });
        slack.addMessage(event);
        return event;
      });
      for (const [i, event] of mentions.slice(0, 2).entries()) {
        expect((await cluster.sendEvent(i % 2, eventCallback(event))).status).toBe(200);
      }
      await until(
        'both answers',
        () =>
          ['First answer.', 'Second answer.'].every((text) =>
            slack
              .thread(C, mentions[0]!.ts)
              .concat(slack.thread(C, mentions[1]!.ts))
              .some((m) => m.text.includes(text)),
          ),
        cluster,
      );
      // The third on instance 0, the fourth on instance 1: each instance had one start of its own.
      for (const [i, event] of mentions.slice(2).entries()) {
        expect((await cluster.sendEvent(i % 2, eventCallback(event))).status).toBe(200);
      }
      await until(
        'two private refusals',
        () =>
          slack
            .ephemerals(C)
            .filter((e) => e.text.includes('You started 2 requests in the last minute (the limit is 2)')).length === 2,
        cluster,
      );
      expect(llm.requests).toHaveLength(2);
    },
  );
});
