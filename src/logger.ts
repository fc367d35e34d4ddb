// Structured logs (pino), with secrets kept out: known secret fields are redacted by path,
// any string that looks like a token or key (xoxb-…, xapp-…, sk-…, Bearer …) is masked
// wherever it appears, since an SDK error can quote a header or a URL, and, given the
// configured secrets, their exact values are masked in every serialized line.
//
// On a terminal the lines are pretty and coloured (pino-pretty, run synchronously in this
// process so a crash loses no line); piped, they are JSON, one object per line, which is what
// log collectors and the tests that read a child's stdout parse. LOG_FORMAT forces either.
// Masking happens on the JSON line, before pretty-printing, so both formats are masked alike.
// pino-pretty (with its colour and date libraries) is loaded only when the format is pretty:
// a bot writing JSON never needs it.
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { EngineLogger } from './engine/index.js';
import type { SecretMasker } from './secrets/index.js';

const SECRET_PATTERN =
  /\b(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|sk-(?:ant-)?[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,})/g;

const SECRET_FIELDS = [
  'token',
  'botToken',
  'appToken',
  'apiKey',
  'signingSecret',
  'authorization',
  'Authorization',
  'password',
  'secret',
];

const SECRET_PATHS = [
  ...SECRET_FIELDS,
  '*.token',
  '*.botToken',
  '*.appToken',
  '*.apiKey',
  '*.signingSecret',
  '*.authorization',
  '*.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'config.SLACK_BOT_TOKEN',
  'config.SLACK_APP_TOKEN',
  'config.SLACK_SIGNING_SECRET',
  'config.OPENAI_API_KEY',
  'config.ANTHROPIC_API_KEY',
];

/** Replace token-looking substrings, walking objects and arrays (errors included). */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(SECRET_PATTERN, (match) => `${match.slice(0, 5)}…[redacted]`);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: maskSecrets(value.message, depth + 1),
      stack: maskSecrets(value.stack, depth + 1),
    };
  }
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSecrets(item, depth + 1)]));
}

/**
 * `secrets`: the configured secrets' exact values are masked in each line as written, after
 * serialization, so nothing escapes: the message, every field, an error's message and stack,
 * a child process's stderr, a line a library formatted itself. The masker also knows each
 * value's JSON-escaped form, which is how a value with a quote or backslash appears here.
 */
export interface LogOutput {
  /** Default: `pretty` when writing to stdout and stdout is a terminal, else `json`. */
  format?: 'json' | 'pretty';
  /** Pretty only. Default: whether stdout is a terminal. */
  colorize?: boolean;
}

export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  secrets?: SecretMasker,
  output: LogOutput = {},
): Logger & EngineLogger {
  const toTerminal = destination === undefined && process.stdout.isTTY === true;
  const format = output.format ?? (toTerminal ? 'pretty' : 'json');
  const written =
    format === 'pretty'
      ? loadPretty()({
          colorize: output.colorize ?? toTerminal,
          sync: true,
          destination: destination ?? 1,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : destination;
  const target = secrets ? maskedDestination(written ?? pino.destination(1), secrets) : written;
  return pino(
    {
      level,
      redact: { paths: SECRET_PATHS, censor: '[redacted]' },
      formatters: { log: (object) => maskSecrets(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          // The message string itself may quote a token too.
          const masked = args.map((arg) => (typeof arg === 'string' ? (maskSecrets(arg) as string) : arg));
          method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    target,
  );
}

/** pino-pretty, required on demand (synchronously: createLogger is), so the JSON format never loads it. */
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/** A destination that masks each serialized line before passing it on (flush passes through). */
function maskedDestination(inner: pino.DestinationStream, secrets: SecretMasker): pino.DestinationStream {
  const flushable = inner as pino.DestinationStream & {
    flushSync?: () => void;
    flush?: (callback?: (error?: Error) => void) => void;
  };
  const masked: pino.DestinationStream & {
    flushSync?: () => void;
    flush?: (callback?: (error?: Error) => void) => void;
  } = {
    write: (line: string) => inner.write(secrets.mask(line)),
  };
  if (flushable.flushSync) masked.flushSync = () => flushable.flushSync!();
  if (flushable.flush) masked.flush = (callback) => flushable.flush!(callback);
  return masked;
}
