// The kinds of value several settings share, each parsed from the text of an environment
// variable and worded so that a problem names what a good value looks like.
import { z } from 'zod';
import { isKnownTimezone } from '../schedules/zoned-time.js';

export const positiveInt = z.coerce.number().int().positive();

export const ratio = z.coerce.number().gt(0).max(1);

/** A duration: `15m`, `90s`, `2h`, or a number of minutes. */
export const minutesSetting = (example: string) =>
  z
    .string()
    .trim()
    .regex(
      /^\d+(\.\d+)?\s*(ms|s|sec|m|min|h)?$/i,
      `must be a duration such as ${example} (ms, s, m or h; a bare number is minutes)`,
    )
    .transform((text) => {
      const [, amount, unit] = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text)!;
      const scale: Record<string, number> = {
        ms: 1,
        s: 1_000,
        sec: 1_000,
        m: 60_000,
        min: 60_000,
        h: 3_600_000,
        '': 60_000,
      };
      return Math.round(Number(amount) * scale[(unit ?? '').toLowerCase()]!);
    });

export const timeZone = z
  .string()
  .trim()
  .refine(isKnownTimezone, 'must be a time zone name such as UTC or Europe/Paris');

/** An http(s) URL: `localhost:11434` parses as a URL of scheme `localhost:`, which no client can reach. */
export const httpUrl = (example: string) =>
  z.url({ protocol: /^https?$/, message: `must be a URL starting with http:// or https://, e.g. ${example}` });

/** A setting that holds a JSON array (a list whose items may hold commas). */
export const jsonList = <T extends z.ZodType>(item: T, max: number, example: string) =>
  z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: `must be a JSON array, e.g. ${example}` });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(item, {
          error: (issue) => (issue.code === 'invalid_type' ? `must be a JSON array, e.g. ${example}` : undefined),
        })
        .min(1, 'must list at least one')
        .max(max, `must list at most ${max}`),
    );
