// How a turn runs and what bounds it: a stalled stream, extended thinking, when the conversation
// is compacted, and the limits on iterations, queued messages, fair use and work in flight.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { positiveInt, ratio } from './setting-values.js';

export const turnSettings = {
  PROVIDER_STALL_TIMEOUT_MS: positiveInt.default(60_000).register(settingDocs, {
    section: 'Model and providers',
    description: 'abandon a model stream that sends nothing for this long',
  }),
  ANTHROPIC_THINKING_BUDGET: z.coerce.number().int().min(1024).optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'turn on extended thinking with this many tokens (at least 1024)',
    unset: 'off',
  }),
  COMPACTION_THRESHOLD: ratio.default(0.8).register(settingDocs, {
    section: 'Model and providers',
    description: 'compact when the conversation reaches this share of the context window',
  }),
  COMPACTION_CAP_TOKENS: positiveInt.default(250_000).register(settingDocs, {
    section: 'Model and providers',
    description: '... or this many tokens, whichever comes first',
  }),
  COMPACTION_MODEL: z.string().trim().min(1).optional().register(settingDocs, {
    section: 'Model and providers',
    description: 'write summaries with this model instead of the active one',
    unset: 'the active model',
  }),
  MAX_ITERATIONS: positiveInt.default(12).register(settingDocs, {
    section: 'Limits and spend',
    description: 'model calls allowed per user turn before the bot asks to continue',
  }),
  MAX_TOOL_CALLS_PER_RESPONSE: positiveInt.default(20).register(settingDocs, {
    section: 'Limits and spend',
    description:
      'tool calls of one model response that run; the rest get an error result telling the model to send fewer, ' +
      'and the thread one note',
  }),
  MAX_QUEUED_INPUTS: positiveInt.default(20).register(settingDocs, {
    section: 'Limits and spend',
    description:
      'messages waiting in one thread while it works, and their total size; a message past either is refused ' +
      'privately',
  }),
  MAX_QUEUED_BYTES: positiveInt.default(256 * 1024).register(settingDocs, {
    sameRowAs: 'MAX_QUEUED_INPUTS',
  }),
  TURNS_PER_USER_PER_MINUTE: positiveInt.default(10).register(settingDocs, {
    section: 'Limits and spend',
    description:
      'new requests one person may start per minute, and threads working for one person at once, for the whole ' +
      'bot (all instances together in cluster mode); past either, a private refusal',
  }),
  THREADS_PER_USER: positiveInt.default(3).register(settingDocs, {
    sameRowAs: 'TURNS_PER_USER_PER_MINUTE',
  }),
  MAX_CONCURRENT_MODEL_CALLS: positiveInt.default(8).register(settingDocs, {
    section: 'Limits and spend',
    description:
      'model calls running at once for the whole bot (all instances together in cluster mode); more wait in ' +
      'line, and the thread shows it',
  }),
  MAX_LIVE_SESSIONS: positiveInt.default(500).register(settingDocs, {
    section: 'Limits and spend',
    description:
      'sessions and thread views kept in memory; the least recently used idle ones are dropped and rebuilt from ' +
      'the store when needed',
  }),
  SLACK_CALLS_PER_THREAD: positiveInt.default(3).register(settingDocs, {
    section: 'Limits and spend',
    description: 'Slack API calls in flight for one thread; more wait their turn',
  }),
};
