// The ports the bot listens on besides the platforms' own connections: HTTP mode, the health
// endpoint, the Prometheus metrics and the playground's page.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';

export const listenerSettings = {
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).register(settingDocs, {
    section: 'Slack',
    description: 'HTTP mode: the port for `/slack/events` and `GET /healthz` (0 picks a free one)',
  }),
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional().register(settingDocs, {
    section: 'Operations: health, metrics, traces, logs',
    description: 'Socket Mode or Discord: answer `GET /healthz` on this port (HTTP mode answers it on `PORT`)',
    unset: 'no health endpoint',
  }),
  // Which label may carry what is held in src/ops/metrics/metrics-placement.ts.
  METRICS: z
    .enum(['on', 'off', 'true', 'false'])
    .default('on')
    .transform((value) => value === 'on' || value === 'true')
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description:
        '`on`: `GET /metrics` in Prometheus text on `127.0.0.1:METRICS_PORT` (and, with `METRICS_TOKEN`, on ' +
        '`PORT` and `HEALTH_PORT`: see Operating, **Metrics**); `off` leaves it out and loads none of it. Its ' +
        "labels are kinds and counts (platform, a registered tool's name, model, outcome), never an id or " +
        'anything anyone wrote',
    }),
  METRICS_TOKEN: z
    .string()
    .trim()
    .min(16, 'must be at least 16 characters (e.g. the output of: openssl rand -hex 32)')
    .optional()
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description:
        'set, every `/metrics` answers only `Authorization: Bearer <token>` (Prometheus: `authorization: ' +
        '{credentials: …}`), and `PORT` (HTTP mode) and `HEALTH_PORT` answer it too, for a scraper on another ' +
        'host; at least 16 characters. Unset, `PORT` and `HEALTH_PORT` answer 404 for `/metrics`',
      unset: 'unset',
    }),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .register(settingDocs, {
      section: 'Operations: health, metrics, traces, logs',
      description:
        "the metrics' own listener, bound to `127.0.0.1` only (0: any free port, logged). Set and taken, the " +
        'start stops; the default taken, the bot runs without it and warns',
      unset: '9464',
    }),
  PLAYGROUND_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(0)
    .register(settingDocs, {
      section: 'Playground',
      description:
        "`npm run playground`: the page's port on 127.0.0.1 (0: the last run's port when it is free, else any " +
        'free one)',
    }),
  PLAYGROUND_TOKEN: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]{32,256}$/,
      'must be 32 to 256 characters of A-Z, a-z, 0-9, - and _ (e.g. the output of: openssl rand -hex 32)',
    )
    .optional()
    .register(settingDocs, {
      section: 'Playground',
      description:
        '`npm run playground`: a fixed access token, 32 to 256 characters of `A-Z a-z 0-9 - _` (e.g. `openssl ' +
        'rand -hex 32`); unset, a new one at each start, so one that leaked dies with the run',
      unset: 'a new one each start',
    }),
};
