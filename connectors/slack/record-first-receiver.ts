// Socket Mode, acknowledged only after the event is recorded. Bolt acknowledges an Events
// API envelope before its listeners run ("acknowledged right away", App.processEvent), so
// with the stock receiver a crash in the next milliseconds would lose a message Slack
// believes delivered. This receiver lets Bolt run the listeners first (our listener claims
// the event and records the message) and sends the acknowledgement afterwards. Buttons and
// slash commands keep Bolt's own timing: their listeners call ack() themselves, within
// Slack's 3-second limit.
import { SocketModeReceiver, type App, type SocketModeReceiverOptions } from '@slack/bolt';

interface SlackEventArgs {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  body: { type?: string } & Record<string, unknown>;
  retry_num?: number;
  retry_reason?: string;
}

export class RecordFirstSocketModeReceiver extends SocketModeReceiver {
  private boltApp: App | undefined;
  private readonly log: NonNullable<SocketModeReceiverOptions['logger']> | undefined;

  constructor(options: SocketModeReceiverOptions) {
    super(options);
    this.log = options.logger;
    this.client.removeAllListeners('slack_event');
    this.client.on('slack_event', (args: SlackEventArgs) => void this.dispatch(args));
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
      await this.boltApp?.processEvent({ body: args.body, ack, retryNum: args.retry_num, retryReason: args.retry_reason, customProperties: {} });
    } catch (error) {
      this.log?.error('a Socket Mode event failed', error);
    } finally {
      // Recorded (or refused) by now: tell Slack it was received. Interactive payloads that
      // never called ack() are acknowledged too, so Slack does not retry them.
      if (deferred || !acked) await args.ack().catch((error: unknown) => this.log?.warn('could not acknowledge an envelope', error));
    }
  }
}
