// `npm run audit` as an operator runs it: a child process that reads the configured store (a
// `.env` in its folder, as `npm start` reads it, or cluster mode's Redis) and prints JSON
// Lines, oldest first, filtered by time, channel and who acted; bad arguments are refused
// on stderr with exit code 2 and print nothing.
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterKeys } from '../../../src/cluster/cluster-keys.js';
import { auditStore } from '../../../src/ops/audit/audit-store.js';
import { AuditTrail } from '../../../src/ops/audit/audit-trail.js';
import type { OpsEvent } from '../../../src/ops/ops-events.js';
import { openKeyvStore } from '../../../src/store/keyv-factory.js';
import { RedisServer } from '../../support/redis-server.js';
import { startCommand } from '../../support/start-command.js';
import { tempDir } from '../../support/test-connector.js';
import { DAY_MS, everyKind, place } from './audit-events.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);

let dir: Awaited<ReturnType<typeof tempDir>>;
let redis: RedisServer;

/** Three days of records in two channels, written newest first (the export orders them). */
function history(): OpsEvent[] {
  return [
    ...everyKind(NOW, place('C2')),
    ...everyKind(NOW - DAY_MS, place('C1')),
    ...everyKind(NOW - 2 * DAY_MS, place('C1')),
  ];
}

async function fill(url: string, cluster: boolean): Promise<void> {
  const keys = clusterKeys();
  const opened = await openKeyvStore(url, 'bot', cluster ? { keys } : {});
  const trail = new AuditTrail(auditStore(opened.keyv, cluster ? { redis: opened.redis!, keys } : undefined), {
    retentionDays: 90,
  });
  for (const event of history()) trail.handle(event);
  await trail.close();
  await opened.close();
}

beforeAll(async () => {
  dir = await tempDir();
  await fill(`sqlite://${dir.path}/data/bot.sqlite`, false);
  await writeFile(join(dir.path, '.env'), 'STORE_URL=sqlite://data/bot.sqlite\n', { mode: 0o600 });
  redis = await RedisServer.start();
  await fill(redis.url, true);
}, 60_000);
afterAll(async () => {
  await redis?.dispose();
  await dir?.remove();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  records: Record<string, unknown>[];
}

/** `npm start -- --audit …` (what `npm run audit -- …` runs), in `cwd`, with only the variables given. */
function audit(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  const { command, args: startArgs } = startCommand(['--audit', ...args]);
  return collect(
    spawn(command, startArgs, {
      cwd: options.cwd ?? dir.path,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

function collect(child: ReturnType<typeof spawn>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        records: stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      }),
    ),
  );
}

const day = (offset: number) => new Date(NOW + offset * DAY_MS).toISOString().slice(0, 10);

describe('npm run audit', () => {
  it('prints every record as JSON Lines, oldest first, from the store the .env names', async () => {
    const run = await audit([]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.records).toHaveLength(33);
    const moments = run.records.map((record) => record.at as number);
    expect(moments).toEqual([...moments].sort((a, b) => a - b));
    expect(run.records[0]).toMatchObject({
      type: 'turn_started',
      by: 'U1',
      channel: 'C1',
      time: new Date(NOW - 2 * DAY_MS).toISOString(),
    });
  }, 60_000);

  it('--since and --until take whole UTC days, or moments with their zone', async () => {
    const since = await audit(['--since', day(-1)]);
    expect(since.code).toBe(0);
    expect(since.records).toHaveLength(22);
    expect(since.records.every((record) => (record.at as number) >= NOW - DAY_MS - 12 * 60 * 60 * 1000)).toBe(true);
    const until = await audit(['--until', day(-1)]);
    expect(until.records).toHaveLength(22); // the whole of that day is in
    const window = await audit([
      `--since=${new Date(NOW - DAY_MS + 2).toISOString()}`,
      '--until',
      new Date(NOW - DAY_MS + 5).toISOString().replace('Z', '+00:00'),
    ]);
    expect(window.code).toBe(0);
    expect(window.records.map((record) => record.at)).toEqual([
      NOW - DAY_MS + 2,
      NOW - DAY_MS + 3,
      NOW - DAY_MS + 4,
      NOW - DAY_MS + 5,
    ]);
  }, 60_000);

  it('--channel keeps one channel, --user what one person did (decided, stopped, granted, continued…)', async () => {
    const channel = await audit(['--channel', 'C2']);
    expect(channel.records).toHaveLength(11);
    expect(new Set(channel.records.map((record) => record.channel))).toEqual(new Set(['C2']));
    const user = await audit(['--user=U9', '--channel', 'C1', '--since', day(-1)]);
    expect(user.records.map((record) => [record.type, record.by])).toEqual([
      ['wait_ended', 'U9'],
      ['grant_changed', 'U9'],
      ['budget_continued', 'U9'],
    ]);
  }, 60_000);

  it('refuses bad arguments with the reason and the usage on stderr, exit code 2, and prints nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['--since', 'yesterday'], /--since "yesterday": not a date/],
      [['--since', '2026-02-30'], /--since "2026-02-30": no such day/],
      [['--until', '2026-12-01T10:00'], /needs a zone/],
      [['--channel'], /--channel needs a value/],
      [['--user', '--channel', 'C1'], /--user needs a value/],
      [['--since', day(0), '--until', day(-2)], /--since must come before --until/],
      [['--chanel', 'C1'], /unknown argument "--chanel"/],
      [['--user', 'U1', '--user', 'U2'], /--user is given twice/],
    ];
    for (const [args, reason] of cases) {
      const run = await audit(args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toContain('usage: npm run audit -- [--since DATE] [--until DATE] [--channel ID] [--user ID]');
    }
  }, 120_000);

  it('says so when the configured store is not there (a wrong folder), exit code 1', async () => {
    const elsewhere = await tempDir();
    try {
      const run = await audit([], { cwd: elsewhere.path });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/no store at .*data\/bot\.sqlite/);
    } finally {
      await elsewhere.remove();
    }
  }, 60_000);

  it("reads cluster mode's Redis when COORDINATION_URL is set", async () => {
    const run = await audit(['--channel', 'C1', '--user', 'U2'], { cwd: ROOT, env: { COORDINATION_URL: redis.url } });
    expect(run.stderr).toBe('');
    expect(run.records.map((record) => [record.type, record.at])).toEqual([
      ['stop_requested', NOW - 2 * DAY_MS + 5],
      ['stopped', NOW - 2 * DAY_MS + 6],
      ['stop_requested', NOW - DAY_MS + 5],
      ['stopped', NOW - DAY_MS + 6],
    ]);
  }, 60_000);

  it('is the package script: npm run audit -- --channel C2', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'audit', '--', '--channel', 'C2'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        STORE_URL: `sqlite://${dir.path}/data/bot.sqlite`,
      },
    });
    const records = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(11);
    expect(records.every((record) => record.channel === 'C2')).toBe(true);
  }, 60_000);
});
