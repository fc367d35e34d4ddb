// Several connectors (Slack, Discord) watch one session layer: the hub hands each report
// to the observers registered for that session's platform.
import type { EngineEvent, InboxItem, MessageSource } from '../engine/index.js';
import type { SessionRecord } from '../store/session-store.js';
import type { InputDisposition, SessionObserver } from './session-manager.js';

export class ObserverHub implements SessionObserver {
  private readonly byPlatform = new Map<string, SessionObserver[]>();

  add(platform: string, observer: SessionObserver): void {
    this.byPlatform.set(platform, [...(this.byPlatform.get(platform) ?? []), observer]);
  }

  private observersOf(session: SessionRecord): SessionObserver[] {
    return this.byPlatform.get(session.key.platform) ?? [];
  }

  async onEvent(session: SessionRecord, event: EngineEvent, prompt?: InboxItem): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onEvent?.(session, event, prompt);
  }

  async onInput(session: SessionRecord, inputId: string, disposition: InputDisposition, source?: MessageSource): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onInput?.(session, inputId, disposition, source);
  }

  async onPromptClosed(session: SessionRecord, item: InboxItem): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onPromptClosed?.(session, item);
  }

  async onWaiting(session: SessionRecord, ahead: number | null): Promise<void> {
    for (const observer of this.observersOf(session)) await observer.onWaiting?.(session, ahead);
  }
}
