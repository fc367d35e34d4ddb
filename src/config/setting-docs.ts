// What the settings page (docs/configuration.md, written by `npm run docs`) says about each
// setting, registered on the setting's own schema so that the two cannot part: the page's
// default column is read from the schema's default, and only a setting that has none says in
// words what leaving it unset means.
import { z } from 'zod';

/** The page's sections, in the order it shows them. */
export const SETTINGS_SECTIONS = [
  'Model and providers',
  'Limits and spend',
  'Who may use it',
  'Tools and shell',
  'Workspaces',
  'Files',
  'Instructions and profiles',
  'Scheduled work',
  'Slack',
  'Discord',
  'Store and several instances',
  'Operations: health, metrics, traces, logs',
  'Playground',
] as const;
export type SettingsSection = (typeof SETTINGS_SECTIONS)[number];

/** A setting with a row of its own on the page. */
export interface SettingRow {
  section: SettingsSection;
  /** The row's meaning, in Markdown; a link is relative to docs/. */
  description: string;
  /** For a setting whose schema has no default: what leaving it unset means ("none", "`UTC`"). */
  unset?: string;
  /** Said after a default that is hard to read as it stands: "20971520 (20 MiB)". */
  defaultNote?: string;
}

/** A setting documented in another's row (the three daily budgets share one), declared right after it. */
interface SharedRow {
  sameRowAs: string;
}

export type SettingDoc = SettingRow | SharedRow;

export const settingDocs = z.registry<SettingDoc>();
