// Steering: messages a person sends while a turn runs. They are queued, never dropped, and
// injected as user messages at the turn's next safe point (after a tool round, or when the
// model answers without tools), so they redirect the running turn instead of starting one.
import type { EngineEvent } from './events.js';
import type { History } from './history.js';
import type { Message, MessageSource } from './messages.js';

export interface SteeringMessage {
  id: string;
  text: string;
  source?: MessageSource;
}

export interface SteeringReceipt {
  id: string;
  /**
   * `running`: a turn is running and will take it at its next safe point (or, if it is
   * already finishing, leave it in `takePendingSteering()` when its event stream ends).
   * `idle`: no turn is running; it waits in `takePendingSteering()` for the caller to
   * start one.
   */
  state: 'running' | 'idle';
}

export class SteeringQueue {
  private readonly queued: SteeringMessage[] = [];

  get size(): number {
    return this.queued.length;
  }

  push(steer: SteeringMessage): void {
    this.queued.push(steer);
  }

  has(id: string): boolean {
    return this.queued.some((steer) => steer.id === id);
  }

  ids(): string[] {
    return this.queued.map((steer) => steer.id);
  }

  takeAll(): SteeringMessage[] {
    return this.queued.splice(0, this.queued.length);
  }

  /** Append every queued message to history, in order, each announced as it lands. */
  async *inject(history: History): AsyncGenerator<EngineEvent, void, undefined> {
    while (this.queued.length > 0) {
      const steer = this.queued.shift()!;
      const message: Message = { role: 'user', content: steer.text, ts: Date.now() };
      if (steer.source) message.source = steer.source;
      await history.append(message);
      const event: EngineEvent = { type: 'steering_injected', id: steer.id, text: steer.text };
      if (steer.source) event.source = steer.source;
      yield event;
    }
  }
}
