// The profiles assembled from the settings (core.ts calls this once): the PROFILES file read
// and checked at start (a broken file stops the start, with every problem), and a reloader
// that reads it again on demand (a change on disk, SIGHUP): a good file replaces the profiles
// for new turns, a broken one changes nothing and every problem is logged.
import { mkdirSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { EngineLogger } from '../engine/index.js';
import { ProfileBook } from './profile-book.js';
import { profileChecks, type KnownNames } from './profile-checks.js';
import type { ProfileChecks } from './profile-file.js';
import { Profiles, type ProfileEnvironment } from './profiles.js';

export interface ProfileSetup {
  profiles: Profiles;
  /** Absent without PROFILES. */
  reloader?: ProfileReloader;
}

export async function profilesFrom(
  path: string | undefined,
  options: { env: ProfileEnvironment; known: KnownNames; logger: EngineLogger },
): Promise<ProfileSetup> {
  const book = new ProfileBook();
  const profiles = new Profiles(book, options.env);
  if (!path) return { profiles };
  const reloader = new ProfileReloader(resolve(path), book, profileChecks(options.known), options.logger);
  // The file's reader (YAML and the profiles' schema) is loaded only when there is a file to read.
  const { ProfilesFileError, readProfilesFile } = await import('./profile-file.js');
  const first = await readProfilesFile(reloader.path, reloader.checks);
  if (!first.ok) throw new ProfilesFileError(reloader.path, first.problems);
  book.replace(first.profiles);
  options.logger.info(
    { profiles: first.profiles.map((profile) => profile.name) },
    `profiles read from ${reloader.path}`,
  );
  return { profiles, reloader };
}

export class ProfileReloader {
  constructor(
    readonly path: string,
    private readonly book: ProfileBook,
    readonly checks: ProfileChecks,
    private readonly logger: EngineLogger,
  ) {}

  /** Read the file again: applied when good (for new turns), else the last good profiles stay and each problem is logged. */
  async reload(): Promise<{ ok: true; profiles: string[] } | { ok: false; problems: string[] }> {
    const { readProfilesFile } = await import('./profile-file.js');
    const reading = await readProfilesFile(this.path, this.checks);
    if (!reading.ok) {
      for (const problem of reading.problems) this.logger.error({ file: this.path }, `PROFILES: ${problem}`);
      this.logger.warn(
        { file: this.path, problems: reading.problems.length },
        'the profiles file has problems: the last good profiles stay in force',
      );
      return { ok: false, problems: reading.problems };
    }
    this.book.replace(reading.profiles);
    const names = reading.profiles.map((profile) => profile.name);
    this.logger.info({ file: this.path, profiles: names }, 'profiles reloaded: new turns run under them');
    return { ok: true, profiles: names };
  }
}

/**
 * A profile's folder under WORKSPACE_DIR, made if need be. Its real path must stay inside
 * WORKSPACE_DIR: a link planted there (a shared scope's command can make one) must not carry
 * a profile's conversations out of it.
 */
export function profileFolder(workspaceDir: string, folder: string | undefined): string {
  if (!folder) return workspaceDir;
  mkdirSync(workspaceDir, { recursive: true });
  const base = realpathSync(workspaceDir);
  const wanted = resolve(base, folder);
  mkdirSync(wanted, { recursive: true });
  const real = realpathSync(wanted);
  if (real !== wanted || !real.startsWith(base + sep))
    throw new Error(`the profile folder ${folder} leads out of WORKSPACE_DIR (to ${real}); remove the link`);
  return real;
}
