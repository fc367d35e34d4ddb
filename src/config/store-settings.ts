// Where conversations live and for how long, and the Redis several instances share in cluster
// mode (src/cluster/). The audit trail's records are kept apart (src/ops/audit/).
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { positiveInt } from './setting-values.js';

export const storeSettings = {
  COORDINATION_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/i, 'must be a Redis URL such as redis://10.0.0.5:6379')
    .optional()
    .register(settingDocs, {
      section: 'Store and several instances',
      description:
        'cluster mode: several instances share this Redis for leases, command lists and the conversations ' +
        '(`STORE_URL` may then be left out); see [Several instances](operations.md#several-instances)',
      unset: 'none (one process)',
    }),
  CLUSTER_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(15_000)
    .register(settingDocs, {
      section: 'Store and several instances',
      description:
        "cluster mode: how long a session's lease lasts unrenewed; a dead instance's sessions are taken over " +
        'after this plus a sweep',
    }),
  CLUSTER_SWEEP_MS: z.coerce.number().int().min(100).default(2_000).register(settingDocs, {
    section: 'Store and several instances',
    description: 'cluster mode: how often each instance looks for sessions whose owner stopped renewing',
  }),
  STORE_URL: z
    .string()
    .regex(/^[a-z][a-z0-9+.-]*:\/\//i, 'must be a URL such as sqlite://data/bot.sqlite')
    .default('sqlite://data/bot.sqlite')
    .register(settingDocs, {
      section: 'Store and several instances',
      description:
        'where conversations live: `sqlite://path`; `memory://` (nothing kept after the process ends: for trying ' +
        'things out); `redis://…` or `rediss://…` (TLS): Redis, built in, the store of cluster mode; or a Keyv ' +
        'backend by URL (`postgresql://…`, `mysql://…`, `mongodb://…` after `npm install @keyv/postgres`, ' +
        '`@keyv/mysql` or `@keyv/mongo`)',
    }),
  RETENTION_DAYS: positiveInt.default(30).register(settingDocs, {
    section: 'Store and several instances',
    description: "days a thread's transcript and prompts are kept after its last activity",
  }),
  AUDIT_RETENTION_DAYS: positiveInt.default(90).register(settingDocs, {
    section: 'Store and several instances',
    description:
      "days the audit trail's records are kept (who started turns, ran tools, approved, granted, stopped, " +
      'switched models, forgot a thread: metadata, never message text), counted apart from `RETENTION_DAYS`; ' +
      "`/forget` removes a thread's transcript but not its audit records. Export: `npm run audit -- [--since " +
      'DATE] [--until DATE] [--channel ID] [--user ID]` prints JSON Lines, oldest first',
  }),
};
