// The log lines: how much the bot writes, and in which format.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';

export const logSettings = {
  LOG_FORMAT: z.enum(['json', 'pretty']).optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description: '`json` (one object per line) or `pretty` (coloured lines)',
    unset: '`pretty` on a terminal, else `json`',
  }),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description: '`fatal` `error` `warn` `info` `debug` `trace` `silent`',
    }),
};
