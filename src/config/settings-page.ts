// The settings page, docs/configuration.md, as Markdown made from the schema: one table per
// section, a row per setting (or per group of settings that share a row), its meaning as
// registered beside it, and its default read from the schema itself. A default changed in
// code is changed on the page by `npm run docs`, and a test fails until it is.
import { z } from 'zod';
import { ConfigSchema } from '../config.js';
import { SETTINGS_SECTIONS, settingDocs, type SettingRow, type SettingsSection } from './setting-docs.js';

const INTRO = `Environment variables, or a \`.env\` file in the working directory (see \`.env.example\`: its
first block is what a start needs, the rest is optional). Everything is validated at
start-up and every problem is reported in one message.`;

/** What a section's table alone does not say, shown under it. */
const SECTION_NOTES: Partial<Record<SettingsSection, string>> = {
  'Who may use it': `**Member ids** for \`ALLOWED_USERS\` and \`ADMINS\`: on Slack, open the person's profile → **⋮**
(More) → **Copy member ID** (\`U…\`); on Discord, turn on **User Settings → Advanced →
Developer Mode**, then right-click the person → **Copy User ID** (a long number).`,
};

interface PageRow {
  names: string[];
  doc: SettingRow;
  defaults: unknown[];
}

/** The page, from the settings in `shape` (every setting of the configuration unless a test says otherwise). */
export function settingsPage(shape: Record<string, z.ZodType> = ConfigSchema.shape): string {
  const rows = pageRows(shape);
  const sections = SETTINGS_SECTIONS.map((title) => ({
    title,
    rows: rows.filter((row) => row.doc.section === title),
  })).filter((section) => section.rows.length > 0);
  const parts = [
    '# Configuration',
    "<!-- Written by `npm run docs` from the settings' schema in src/config/: change a description or a default there, not here. -->",
    INTRO,
    `The settings by area: ${sections.map(({ title }) => `[${title}](#${anchorOf(title)})`).join(', ')}.`,
  ];
  for (const { title, rows: sectionRows } of sections) {
    parts.push(
      `## ${title}`,
      ['| variable | meaning | default |', '| --- | --- | --- |', ...sectionRows.map(tableRow)].join('\n'),
    );
    const note = SECTION_NOTES[title];
    if (note) parts.push(note);
  }
  return `${parts.join('\n\n')}\n`;
}

/** The rows in declaration order, a setting documented in another's row joined to it. */
function pageRows(shape: Record<string, z.ZodType>): PageRow[] {
  const rows: PageRow[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const doc = settingDocs.get(schema);
    if (!doc)
      throw new Error(`settings page: ${name} has no description (register one with settingDocs, beside its schema)`);
    if ('sameRowAs' in doc) {
      const lead = rows.at(-1);
      if (lead?.names[0] !== doc.sameRowAs)
        throw new Error(
          `settings page: ${name} shares ${doc.sameRowAs}'s row, so it is declared right after ${doc.sameRowAs} (or its other row-mates)`,
        );
      lead.names.push(name);
      lead.defaults.push(schemaDefault(schema));
    } else {
      rows.push({ names: [name], doc, defaults: [schemaDefault(schema)] });
    }
  }
  return rows;
}

function tableRow({ names, doc, defaults }: PageRow): string {
  const cells = [names.map((name) => `\`${name}\``).join(', '), doc.description, defaultCell(names, doc, defaults)];
  for (const cell of cells) {
    // A pipe would end the cell early, a line break the row (GitHub renders both literally).
    if (/[|\n]/.test(cell))
      throw new Error(`settings page: ${names[0]}'s row may hold no "|" or line break: ${JSON.stringify(cell)}`);
  }
  return `| ${cells.join(' | ')} |`;
}

/** The schema's defaults, as a reader would type them; or, for settings without one, what unset means. */
function defaultCell(names: string[], doc: SettingRow, defaults: unknown[]): string {
  const given = defaults.filter((value) => value !== undefined);
  if (doc.unset !== undefined) {
    if (given.length > 0)
      throw new Error(
        `settings page: ${names.join(', ')} has a default in its schema, so its page entry does not say what unset means`,
      );
    return doc.unset;
  }
  if (given.length < defaults.length)
    throw new Error(
      `settings page: ${names.join(', ')} has no default in its schema, so its page entry says what unset means (unset)`,
    );
  const shown = given.map(typedValue).join(', ');
  return doc.defaultNote === undefined ? shown : `${shown} (${doc.defaultNote})`;
}

function typedValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `\`${value}\``;
  throw new Error(`settings page: cannot show the default ${JSON.stringify(value)}`);
}

/**
 * The value a setting takes when unset, as it is written: a `.default()` gives its value, a
 * `.prefault()` the text it parses (`15m`), and a transform the default of what it reads.
 */
function schemaDefault(schema: z.ZodType): unknown {
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) return schema.def.defaultValue;
  if (schema instanceof z.ZodPipe) return schemaDefault(schema.in as z.ZodType);
  return undefined;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}
