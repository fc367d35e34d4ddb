// The settings page, docs/configuration.md, is made from the schema by `npm run docs`: these
// tests hold the committed page to what the generator writes now, and every setting to a
// description beside its schema, so that a default changed in code cannot leave the page behind.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigSchema } from '../../src/config.js';
import { SETTINGS_SECTIONS, settingDocs } from '../../src/config/setting-docs.js';
import { settingsPage } from '../../src/config/settings-page.js';

const PAGE_PATH = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The settings a page's tables name, row by row. */
function rowsOf(page: string): string[][] {
  return page
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => [...line.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

describe('docs/configuration.md', () => {
  it('is what `npm run docs` writes from the schema now (run it after changing a setting)', () => {
    expect(
      readFileSync(PAGE_PATH, 'utf8'),
      'docs/configuration.md is stale: run `npm run docs` and commit the page',
    ).toBe(settingsPage());
  });

  it('every setting has a description beside its schema, or shares the row of the setting declared just before it', () => {
    const names = Object.keys(ConfigSchema.shape);
    const undocumented: string[] = [];
    names.forEach((name, at) => {
      const doc = settingDocs.get(ConfigSchema.shape[name as keyof typeof ConfigSchema.shape]);
      if (!doc) undocumented.push(name);
      else if ('sameRowAs' in doc)
        expect(names.slice(0, at), `${name} shares a row with ${doc.sameRowAs}`).toContain(doc.sameRowAs);
      else expect(doc.description.trim().length, `${name}'s description`).toBeGreaterThan(10);
    });
    expect(undocumented).toEqual([]);
  });

  it('shows every setting in exactly one row, under a heading for each section', () => {
    const page = settingsPage();
    expect(rowsOf(page).flat().sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
    for (const section of SETTINGS_SECTIONS) expect(page).toContain(`\n## ${section}\n`);
    expect(rowsOf(page).find((names) => names.includes('BUDGET_CHANNEL_DAILY'))).toEqual([
      'BUDGET_USER_DAILY',
      'BUDGET_CHANNEL_DAILY',
      'BUDGET_WORKSPACE_DAILY',
    ]);
  });

  it("shows each default as the schema has it: a number, a word in code, a duration as it is written, a shared row's defaults in turn", () => {
    const page = settingsPage();
    expect(page).toContain(
      '| `PROVIDER_STALL_TIMEOUT_MS` | abandon a model stream that sends nothing for this long | 60000 |',
    );
    expect(page).toMatch(/\| `LOG_LEVEL` \| .* \| `info` \|\n/);
    expect(page).toMatch(/\| `SCHEDULE_GRACE` \| .* \| `15m` \|\n/);
    expect(page).toMatch(/\| `SHELL_NETWORK` \| .* \| `off` \|\n/);
    expect(page).toMatch(/\| `MAX_FILE_BYTES` \| .* \| 20971520 \(20 MiB\) \|\n/);
    expect(page).toMatch(/\| `MAX_QUEUED_INPUTS`, `MAX_QUEUED_BYTES` \| .* \| 20, 262144 \|\n/);
  });
});

describe('the settings page generator', () => {
  const documented = (description: string) => ({ section: 'Limits and spend' as const, description });

  it('a default changed in the schema is the default the page shows', () => {
    const before = settingsPage({
      MAX_WIDGETS: z.coerce.number().default(5).register(settingDocs, documented('widgets one thread may hold')),
    });
    const after = settingsPage({
      MAX_WIDGETS: z.coerce.number().default(6).register(settingDocs, documented('widgets one thread may hold')),
    });
    expect(before).toContain('| `MAX_WIDGETS` | widgets one thread may hold | 5 |');
    expect(after).toContain('| `MAX_WIDGETS` | widgets one thread may hold | 6 |');
  });

  it('a setting with no description stops it, naming the setting', () => {
    expect(() => settingsPage({ MAX_WIDGETS: z.coerce.number().default(5) })).toThrow(/MAX_WIDGETS has no description/);
  });

  it('a default must come from the schema: words for an unset value are refused beside one, and required without one', () => {
    expect(() =>
      settingsPage({
        WIDGET: z
          .string()
          .default('a')
          .register(settingDocs, { ...documented('the widget to use'), unset: 'none' }),
      }),
    ).toThrow(/WIDGET has a default in its schema/);
    expect(() =>
      settingsPage({ WIDGET: z.string().optional().register(settingDocs, documented('the widget to use')) }),
    ).toThrow(/WIDGET has no default in its schema/);
  });

  it("a setting sharing a row comes right after that row's first setting", () => {
    const shape = {
      WIDGETS_PER_USER: z.coerce
        .number()
        .default(2)
        .register(settingDocs, documented('widgets one person, and one channel, may hold')),
      WIDGET_COLOUR: z.string().default('red').register(settingDocs, documented('the colour of a widget')),
      WIDGETS_PER_CHANNEL: z.coerce.number().default(9).register(settingDocs, { sameRowAs: 'WIDGETS_PER_USER' }),
    };
    expect(() => settingsPage(shape)).toThrow(/WIDGETS_PER_CHANNEL shares WIDGETS_PER_USER's row/);
    const { WIDGET_COLOUR: _colour, ...together } = shape;
    expect(settingsPage(together)).toContain(
      '| `WIDGETS_PER_USER`, `WIDGETS_PER_CHANNEL` | widgets one person, and one channel, may hold | 2, 9 |',
    );
  });
});
