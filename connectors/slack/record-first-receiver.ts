// Socket Mode, acknowledged only after the event is recorded. Bolt acknowledges an Events
// API envelope before its listeners run ("acknowledged right away", App.processEvent), so
// with the stock receiver a crash in the next milliseconds would lose a message Slack
// believes delivered. This receiver lets Bolt run the listeners first (our listener claims
// the event and records the message) and sends the acknowledgement afterwards. Buttons and
// slash commands keep Bolt's own timing: their listeners call ack() themselves, within
// Slack's 3-second limit.
//
// It also reads Slack's `hello` frame, which says how many Socket Mode connections the app has
// open (`num_connections`): Slack spreads events over all of them (up to 10), so a second
// instance, or a forgotten process with the same app token, takes a share of the events.
import type { App, SocketModeReceiverOptions } from '@slack/bolt';
import { SocketModeReceiver } from './bolt-classes.js';
import type { EngineLogger } from '../../src/engine/index.js';

export interface RecordFirstReceiverOptions extends SocketModeReceiverOptions {
  /** Slack's `hello` on each (re)connection: how many connections the app has open now. */
  onConnectionCount?: (count: number) => void;
}

/**
 * The warning when Slack says several Socket Mode connections are open for the app.
 * @internal
 */
export function socketConnectionsWarning(count: number): string {
  return `Slack Socket Mode: ${count} connections are open for this app; Slack spreads events over them. Run several instances in HTTP mode (README: Several instances), or at most 10 in Socket Mode.`;
}

/** A connection-count listener that warns once per change while more than one connection is open. */
export function connectionCountWarner(logger: Pick<EngineLogger, 'warn'>): (count: number) => void {
  let warned = 1;
  return (count) => {
    if (count <= 1) {
      warned = 1;
      return;
    }
    if (count === warned) return;
    warned = count;
    logger.warn({ numConnections: count }, socketConnectionsWarning(count));
  };
}

interface SlackEventArgs {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  body: { type?: string } & Record<string, unknown>;
  retry_num?: number;
  retry_reason?: string;
}

export class RecordFirstSocketModeReceiver extends SocketModeReceiver {
  private boltApp: App | undefined;
  private readonly log: NonNullable<SocketModeReceiverOptions['logger']> | undefined;

  constructor(options: RecordFirstReceiverOptions) {
    super(options);
    this.log = options.logger;
    this.client.removeAllListeners('slack_event');
    this.client.on('slack_event', (args: SlackEventArgs) => void this.dispatch(args));
    const onCount = options.onConnectionCount;
    // @slack/socket-mode (3.x) turns `hello` into its Connected state and drops the frame's
    // fields; every raw frame is emitted as 'ws_message' first, so `num_connections` is read there.
    if (onCount)
      this.client.on('ws_message', (data: unknown, isBinary: boolean) => {
        const count = isBinary ? undefined : helloConnections(data);
        if (count !== undefined) onCount(count);
      });
  }

  override init(app: App): void {
    super.init(app);
    this.boltApp = app;
  }

  private async dispatch(args: SlackEventArgs): Promise<void> {
    const deferred = args.body.type === 'event_callback';
    let acked = false;
    const ack = async (response?: Record<string, unknown>): Promise<void> => {
      if (acked) return;
      acked = true;
      if (!deferred) await args.ack(response);
    };
    try {
      await this.boltApp?.processEvent({
        body: args.body,
        ack,
        retryNum: args.retry_num,
        retryReason: args.retry_reason,
        customProperties: {},
      });
    } catch (error) {
      this.log?.error('a Socket Mode event failed', error);
    } finally {
      // Recorded (or refused) by now: tell Slack it was received. Interactive payloads that
      // never called ack() are acknowledged too, so Slack does not retry them.
      if (deferred || !acked)
        await args.ack().catch((error: unknown) => this.log?.warn('could not acknowledge an envelope', error));
    }
  }
}

/** `num_connections` of a `hello` frame, or undefined for any other frame. */
function helloConnections(data: unknown): number | undefined {
  // `ws` hands a text frame over as a string; a Buffer is decoded in case a version does not.
  const text = typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('utf8') : undefined;
  if (!text || !text.includes('"hello"')) return undefined;
  try {
    const frame = JSON.parse(text) as { type?: unknown; num_connections?: unknown };
    return frame.type === 'hello' && typeof frame.num_connections === 'number' ? frame.num_connections : undefined;
  } catch {
    return undefined;
  }
}
