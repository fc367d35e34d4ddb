// What a person is looking at while they write to the bot, as their platform tells it: Slack's
// Messages tab reports the channel open beside the conversation (`assistant_thread_started` /
// `assistant_thread_context_changed` for one thread, `app_context_changed` for the whole DM).
// It is kept as the conversation's context and given to the model, at each call, as a line of
// the per-call `<system-context>` block — a fact about where the person is, never the content
// of what they look at: the bot does not read that channel (the person may see what the bot's
// other users may not, and reading it would hand it to whoever writes next).
//
// Two scopes: one thread (the assistant container says which thread is open), or one person
// (the agent messaging experience reports a person's view for their whole DM with the bot). A
// person's view reaches a thread only when the connector carries it there, as that person
// writes in their DM (`carryPersonal`): never into a channel thread others share. Kept for a
// week (a view goes stale) and a thread's is deleted with the thread (/forget, retention).
import type Keyv from 'keyv';
import { z } from 'zod';
import { sessionIdOf, type SessionKey } from '../store/session-store.js';

/** A week: a view older than that says nothing about where the person is now. */
const KEEP_MS = 7 * 24 * 60 * 60 * 1000;

const ViewingSchema = z.object({
  /** One sentence for the model, written by the connector from checked ids only (never free text). */
  description: z.string().max(500),
  at: z.number(),
});
export type Viewing = z.infer<typeof ViewingSchema>;

/** One person of one workspace on one platform. */
export interface Person {
  platform: string;
  workspace: string;
  userId: string;
}

/** Where the context applies: one thread, or one person (until carried into a thread of theirs). */
export type ViewingScope = { thread: SessionKey } | { person: Person };

export class ViewingContexts {
  constructor(
    private readonly keyv: Keyv,
    private readonly now: () => number = Date.now,
  ) {}

  /** The person now looks at what `description` says (undefined: at nothing we know of). */
  async set(scope: ViewingScope, description: string | undefined): Promise<void> {
    const key = keyOf(scope);
    if (description === undefined) await this.keyv.delete(key);
    else await this.keyv.set(key, ViewingSchema.parse({ description, at: this.now() }), KEEP_MS);
  }

  /** The line the model gets for a thread, or '' when nothing is known. */
  async describe(thread: SessionKey): Promise<string> {
    return (await this.read({ thread }))?.description ?? '';
  }

  /**
   * The person writes in a thread of their own DM: their view, when newer than what the
   * thread holds, becomes the thread's.
   */
  async carryPersonal(thread: SessionKey, person: Person): Promise<void> {
    const personal = await this.read({ person });
    if (!personal) return;
    const own = await this.read({ thread });
    if (own && own.at >= personal.at) return;
    await this.keyv.set(keyOf({ thread }), personal, KEEP_MS);
  }

  /** A forgotten thread: its own context goes with it. */
  async forget(thread: SessionKey): Promise<void> {
    await this.keyv.delete(keyOf({ thread }));
  }

  private async read(scope: ViewingScope): Promise<Viewing | undefined> {
    const parsed = ViewingSchema.safeParse(await this.keyv.get<unknown>(keyOf(scope)));
    return parsed.success ? parsed.data : undefined;
  }
}

function keyOf(scope: ViewingScope): string {
  if ('thread' in scope) return `viewing:thread:${sessionIdOf(scope.thread)}`;
  const { platform, workspace, userId } = scope.person;
  return `viewing:person:${[platform, workspace, userId].map(encodeURIComponent).join(':')}`;
}
