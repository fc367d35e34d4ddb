// Several connectors (Slack, Discord, the playground) watch one session layer: the hub hands
// each report to the observers registered for that session's platform.
//
// At shutdown the hub is muted: the turns still in memory go on until the process exits, but
// their writes are fenced (store/write-fence.ts) and nothing they do may reach a thread any
// more; only the suspend report (the "restarting" note) still goes through.
import type { EngineEvent, InboxItem, MessageSource } from '../engine/index.js';
import type { SessionRecord } from '../store/session-store.js';
import type { InputDisposition, SessionObserver } from './session-manager.js';
import type { ThreadNotice } from './session-observer.js';

export class ObserverHub implements SessionObserver {
  private readonly byPlatform = new Map<string, SessionObserver[]>();
  /** Observers of every platform's sessions (the operations side: src/ops/ops-observer.ts), told first. */
  private everywhere: SessionObserver[] = [];
  private muted = false;

  add(platform: string, observer: SessionObserver): void {
    this.byPlatform.set(platform, [...(this.byPlatform.get(platform) ?? []), observer]);
  }

  addEverywhere(observer: SessionObserver): void {
    this.everywhere = [...this.everywhere, observer];
  }

  /** From now on, pass on nothing but `onSuspend`. */
  mute(): void {
    this.muted = true;
  }

  private observersOf(session: SessionRecord): SessionObserver[] {
    if (this.muted) return [];
    const own = this.byPlatform.get(session.key.platform) ?? [];
    return this.everywhere.length > 0 ? [...this.everywhere, ...own] : own;
  }

  async onEvent(session: SessionRecord, event: EngineEvent, prompt?: InboxItem): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onEvent?.(session, event, prompt);
  }

  async onInput(
    session: SessionRecord,
    inputId: string,
    disposition: InputDisposition,
    source?: MessageSource,
  ): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onInput?.(session, inputId, disposition, source);
  }

  async onPromptClosed(session: SessionRecord, item: InboxItem): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onPromptClosed?.(session, item);
  }

  async onWaiting(session: SessionRecord, ahead: number | null): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onWaiting?.(session, ahead);
  }

  async onDecision(session: SessionRecord, item: InboxItem): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onDecision?.(session, item);
  }

  async onNotice(session: SessionRecord, notice: ThreadNotice): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onNotice?.(session, notice);
  }

  async onStopBy(session: SessionRecord, userId: string): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onStopBy?.(session, userId);
  }

  async onTakeover(session: SessionRecord): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onTakeover?.(session);
  }

  async onSuspend(session: SessionRecord, waitingForAnswer: boolean): Promise<void> {
    for (const observer of this.byPlatform.get(session.key.platform) ?? [])
      await observer.onSuspend?.(session, waitingForAnswer);
  }
}
