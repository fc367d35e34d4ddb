// What a bot running as root grants (request_directory): not the trees where other people's
// and services' files live (/home, /opt, /srv, /mnt, /media), nor another user's folder or
// one inside it, unless GRANT_ROOTS names them; a bot that is not root is judged as before.
// The root bot is the Workspace's `botUid: 0`, so this holds whoever runs the tests.
import { chown, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_AS } from '../../src/sandbox/run-as.js';
import { parseGrantRoots } from '../../src/tools/index.js';
import { Workspace } from '../../src/tools/workspace.js';
import { ROOT_BOT_RESERVED_TREES } from '../../src/tools/grant-rules.js';
import { tempDir } from '../support/test-connector.js';

const ROOT = process.getuid?.() === 0;
/** Another user's uid: one we hand a folder to as root; otherwise the tests' own, which is neither root nor 65534. */
const ALICE = ROOT ? 4242 : process.getuid!();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function host() {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const workspace = path.join(dir.path, 'workspace');
  const alice = path.join(dir.path, 'alice');
  const shared = path.join(dir.path, 'shared');
  await mkdir(path.join(alice, 'project'), { recursive: true });
  await mkdir(shared);
  await mkdir(workspace);
  if (ROOT) await chown(alice, ALICE, ALICE);
  // What the bot's commands may use: their run-as user's.
  if (ROOT) await chown(shared, DEFAULT_RUN_AS.uid, DEFAULT_RUN_AS.gid);
  const open = (options: { botUid: number; grantRoots?: string }) =>
    Workspace.open(workspace, {
      botUid: options.botUid,
      owner: DEFAULT_RUN_AS,
      grantRoots: parseGrantRoots(options.grantRoots),
      homeDir: path.join(dir.path, 'home'),
    });
  return { dir: dir.path, alice, shared, open };
}

describe('a bot running as root grants only its own folders without GRANT_ROOTS', () => {
  it('refuses /home, /opt, /srv, /mnt, /media and anything under them, whether they exist here or not', async () => {
    const { open } = await host();
    const workspace = open({ botUid: 0 });
    for (const tree of ROOT_BOT_RESERVED_TREES) {
      expect(workspace.grantRefusal(tree), tree).toBe(
        `refused: ${tree} is where other people's and services' files are, and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`,
      );
      expect(workspace.grantRefusal(`${tree}/some-project`), tree).toBe(
        `refused: ${tree}/some-project is in ${tree}, where other people's and services' files are, and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`,
      );
      expect(() => workspace.grant(tree)).toThrow(/where other people's and services' files are|no such file/);
    }
  });

  it("refuses another user's folder and any folder inside one, naming whose it is", async () => {
    const { alice, open } = await host();
    const workspace = open({ botUid: 0 });
    expect(workspace.grantRefusal(alice)).toBe(
      `refused: ${alice} belongs to another user (uid ${ALICE}), and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`,
    );
    // As root, the project folder inside alice's is root's own; otherwise it is the tests' user's too.
    const project = path.join(alice, 'project');
    expect(workspace.grantRefusal(project)).toBe(
      ROOT
        ? `refused: ${project} is in ${alice}, which belongs to another user (uid ${ALICE}), and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`
        : `refused: ${project} belongs to another user (uid ${ALICE}), and this bot runs as root; an operator may allow it by listing it in GRANT_ROOTS`,
    );
    expect(() => workspace.grant(path.join(alice, 'project'))).toThrow('belongs to another user');
  });

  it('grants them once GRANT_ROOTS names them', async () => {
    const { dir, alice, open } = await host();
    const workspace = open({ botUid: 0, grantRoots: dir });
    expect(workspace.grantRefusal(path.join(alice, 'project'))).toBeNull();
    expect(workspace.grant(path.join(alice, 'project'))).toBe(path.join(alice, 'project'));
  });

  it("grants a folder of its own or its commands' user", async () => {
    const { shared, open } = await host();
    // As root the folder is the run-as user's; otherwise the tests own every folder, and only a non-root bot may take it.
    const workspace = open({ botUid: ROOT ? 0 : process.getuid!() });
    expect(workspace.grantRefusal(shared)).toBeNull();
  });
});

describe('a bot that is not root', () => {
  it('is judged as before: the reserved trees and other users’ folders are not refused for that', async () => {
    const { alice, open } = await host();
    const workspace = open({ botUid: 1000 });
    for (const tree of ROOT_BOT_RESERVED_TREES)
      expect(workspace.grantRefusal(tree) ?? '').not.toContain('runs as root');
    expect(workspace.grantRefusal(path.join(alice, 'project'))).toBeNull();
  });
});
