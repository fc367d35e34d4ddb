// The bot's own files: what no shell command may see and no granted folder may include.
//
// One idea: the list is derived from the configuration, not typed by the operator, so it
// cannot fall behind: the project folder (the bot's code and its node_modules), the folder
// it was started in (where `.env` is read), the `.env` file, the store's folder, the MCP
// configuration, and the home folder of the bot's user (SSH keys, cloud credentials, shell
// history). Paths are made real (symlinks resolved) where they exist, so a check compares
// like with like.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInside, realpathIfExists } from '../tools/real-paths.js';

export interface BotPathsInput {
  storeUrl: string;
  mcpConfig: string;
  /** Where `.env` is read and relative settings resolve (default: process.cwd()). */
  workingDir?: string;
  /** The bot user's home folder (default: os.homedir()). */
  homeDir?: string;
}

export interface ProtectedPath {
  path: string;
  /** What it is, for messages: "the store's folder". */
  what: string;
}

export interface BotPaths {
  /** The home folder of the bot's user (real path). */
  home: string;
  /** Every path the sandbox hides and a grant may not overlap, the home folder included. */
  protected: ProtectedPath[];
}

/**
 * The folder holding the bot's package.json: the nearest one above this file, which runs from
 * src/sandbox/ or from a build's copy of it, dist/<stamp>/src/sandbox/ (bin/build.mjs).
 */
function projectFolder(): string | null {
  for (let folder = path.dirname(fileURLToPath(import.meta.url)), depth = 0; depth < 5; depth++) {
    folder = path.dirname(folder);
    if (existsSync(path.join(folder, 'package.json'))) return folder;
  }
  return null;
}

/** The SQLite file's folder for a sqlite:// URL; other backends keep no files here. */
function storeFolderOf(storeUrl: string, workingDir: string): string | null {
  if (!/^sqlite:\/\//i.test(storeUrl)) return null;
  const file = storeUrl.slice('sqlite://'.length);
  return file ? path.dirname(path.resolve(workingDir, file)) : null;
}

/** A path made absolute, and real where it exists, so checks compare like with like. */
export function realOrResolved(candidate: string): string {
  return realpathIfExists(path.resolve(candidate));
}

export function botPaths(input: BotPathsInput): BotPaths {
  const workingDir = realOrResolved(input.workingDir ?? process.cwd());
  const home = realOrResolved(input.homeDir ?? os.homedir());
  const entries: ProtectedPath[] = [
    { path: workingDir, what: 'the folder the bot runs in' },
    { path: path.join(workingDir, '.env'), what: "the bot's .env file" },
    { path: path.resolve(workingDir, input.mcpConfig), what: 'the MCP configuration' },
    { path: home, what: "the home folder of the bot's user" },
  ];
  const project = projectFolder();
  if (project) entries.push({ path: project, what: "the bot's project folder" });
  const store = storeFolderOf(input.storeUrl, workingDir);
  if (store) entries.push({ path: store, what: "the store's folder" });
  const seen = new Set<string>();
  const unique: ProtectedPath[] = [];
  for (const entry of entries) {
    const real = realOrResolved(entry.path);
    if (seen.has(real)) continue;
    seen.add(real);
    unique.push({ path: real, what: entry.what });
  }
  return { home, protected: unique };
}

/**
 * Why the workspace may not be used, or null. One of the bot's own paths inside the
 * workspace would be visible (and writable) to every command, sandbox or not.
 */
export function workspaceProblem(workspaceRoot: string, paths: BotPaths): string | null {
  const root = realOrResolved(workspaceRoot);
  const exposed = paths.protected.filter((entry) => isInside(entry.path, root));
  if (exposed.length === 0) return null;
  return (
    `WORKSPACE_DIR (${root}) holds ${exposed.map((entry) => `${entry.what} (${entry.path})`).join(', ')}; ` +
    "the tools would see the bot's own files. Point WORKSPACE_DIR at a folder of its own, e.g. ./workspace"
  );
}
