// What the model may cost: the prices calls are counted at, and the spend limits checked before
// every model call (src/ops/spend/). The built-in price table is src/ops/pricing.ts.
import { z } from 'zod';
import { limitSetting } from '../ops/spend/budget-limits.js';
import { settingDocs } from './setting-docs.js';
import { timeZone } from './setting-values.js';

export const spendSettings = {
  MODEL_PRICES: z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({
          code: 'custom',
          message: 'must be a JSON object, e.g. {"openai:gpt-4.1": {"input": 2, "cachedInput": 0.5, "output": 8}}',
        });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .record(
          z.string(),
          z
            .object({
              input: z.number().min(0),
              output: z.number().min(0),
              cachedInput: z.number().min(0).optional(),
              cacheWrite: z.number().min(0).optional(),
            })
            .strict(),
        )
        .superRefine((prices, context) => {
          for (const key of Object.keys(prices)) {
            if (!/^[a-z0-9_-]+:\S+$/i.test(key))
              context.addIssue({
                code: 'custom',
                message: `each key is provider:model, e.g. openai:gpt-4.1 (not ${JSON.stringify(key)})`,
              });
          }
        }),
    )
    .optional()
    .register(settingDocs, {
      section: 'Limits and spend',
      description:
        'prices in USD per million tokens, as JSON keyed `provider:model`: `{"openai:gpt-4.1": {"input": 2, ' +
        '"cachedInput": 0.5, "output": 8}}` (`cachedInput` and `cacheWrite` default to `input`); overrides the ' +
        'built-in table of list prices for the models the bot knows. A model priced nowhere is counted in tokens ' +
        'only',
      unset: 'built-in table',
    }),
  BUDGET_USER_DAILY: limitSetting.optional().register(settingDocs, {
    section: 'Limits and spend',
    description:
      'what one person, one channel and one workspace may spend in a day, checked before every model call ' +
      "(compaction and retries included) against what is spent plus the call's estimate: in USD (`5`, `5.50`, " +
      '`$5`), which holds calls to priced models, or in tokens (`500000 tokens`, `2M tokens`), which holds ' +
      'every call, or both (`$5, 2M tokens`). At 80 % the thread is told once; past it the turn pauses until ' +
      'the day resets or an admin presses Continue, and a new request is refused privately. A model with no ' +
      'price is held only by a token amount',
    unset: 'no limit (spend is recorded either way)',
  }),
  BUDGET_CHANNEL_DAILY: limitSetting.optional().register(settingDocs, {
    sameRowAs: 'BUDGET_USER_DAILY',
  }),
  BUDGET_WORKSPACE_DAILY: limitSetting.optional().register(settingDocs, {
    sameRowAs: 'BUDGET_USER_DAILY',
  }),
  BUDGET_TURN: limitSetting.optional().register(settingDocs, {
    section: 'Limits and spend',
    description: 'what one turn may spend, in the same form',
    unset: 'no limit',
  }),
  BUDGET_TIMEZONE: timeZone.optional().register(settingDocs, {
    section: 'Limits and spend',
    description: 'the time zone whose midnight starts a budget day and month (an IANA name, e.g. `Europe/Paris`)',
    unset: '`UTC`',
  }),
};
