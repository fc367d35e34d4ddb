// Reloading the PROFILES file without a restart: a watcher on the file's folder and SIGHUP,
// both ending in ProfileReloader.reload() (a good file replaces the profiles for new turns, a
// broken one keeps the last good and logs every problem).
//
// The folder is watched, not the file: an editor saves by writing a new file and renaming it
// over the old one, and a watch on the old file's inode would go quiet after the first save.
// Events come in bursts (a write, a rename, a chmod), so one read follows the last event of a
// burst by DEBOUNCE_MS; an event during a read asks for one more read after it. A read that
// catches a half-written file only reports it: the writer's next event reads it again.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { EngineLogger } from '../engine/index.js';

export const PROFILES_DEBOUNCE_MS = 200;

/** What the watcher drives: ProfileReloader, or anything that reads the file again. */
export interface Reloadable {
  readonly path: string;
  reload(): Promise<unknown>;
}

export interface ProfileWatchOptions {
  logger: EngineLogger;
  debounceMs?: number;
}

export class ProfileWatch {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  constructor(
    private readonly reloader: Reloadable,
    private readonly options: ProfileWatchOptions,
  ) {}

  /** Watch the file's folder. A folder that cannot be watched is a warning: SIGHUP still works. */
  start(): this {
    const file = basename(this.reloader.path);
    try {
      this.watcher = watch(dirname(this.reloader.path), { persistent: false }, (_event, name) => {
        // Some platforms give no name: any change in the folder may be the file.
        if (name === null || name === file) this.schedule(this.options.debounceMs ?? PROFILES_DEBOUNCE_MS);
      });
      this.watcher.on('error', (error) =>
        this.options.logger.warn(
          { err: error, file: this.reloader.path },
          'the profiles file is no longer watched; SIGHUP still reloads it',
        ),
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, file: this.reloader.path },
        'the profiles file cannot be watched; send SIGHUP to reload it',
      );
    }
    return this;
  }

  /** Read the file now (SIGHUP: run-bot.ts), in turn with the watch's own reads. */
  reloadNow(reason: string): void {
    this.options.logger.info({ file: this.reloader.path, reason }, 'reading the profiles file again');
    this.schedule(0);
  }

  /** Stop watching; a read under way finishes (it only replaces the book). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
    await this.reading;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.read(), delayMs);
  }

  private read(): void {
    if (this.reading) {
      // A change while reading: read once more when this read ends.
      this.again = true;
      return;
    }
    this.reading = this.reloader
      .reload()
      .then(
        () => undefined,
        (error: unknown) =>
          this.options.logger.error({ err: error, file: this.reloader.path }, 'could not reload the profiles file'),
      )
      .finally(() => {
        this.reading = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.schedule(0);
        }
      });
  }
}
