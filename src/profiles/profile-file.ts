// Reading the PROFILES file: YAML or JSON (YAML is a superset, so one parser reads both),
// checked with the schema and then with what only the running bot knows (tools, MCP servers,
// models: `ProfileChecks`). Every problem is collected and reported at once, each naming the
// profile and the key, so an operator fixes the file in one pass.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { ProfileSchema, ProfilesFileSchema, type Profile, type ProfilesFile } from './profile-schema.js';

/** What the checks read of a profile: the names it gives (tools, models, allow-list entries). */
export type CheckedParts = Pick<Profile, 'tools' | 'model' | 'models' | 'shellAllowlist'>;

/** Checks the schema cannot make: each returns the problems of one profile, in words. */
export type ProfileChecks = (profile: CheckedParts) => string[];

export type ProfilesReading = { ok: true; profiles: Profile[] } | { ok: false; problems: string[] };

export class ProfilesFileError extends Error {
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(
      `PROFILES (${path}) has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ProfilesFileError';
  }
}

/** Reads and checks the file; never throws for what the file holds (a missing file is a problem too). */
export async function readProfilesFile(path: string, checks: ProfileChecks = () => []): Promise<ProfilesReading> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      problems: [
        code === 'ENOENT'
          ? `the file ${path} does not exist`
          : `the file ${path} cannot be read (${code ?? String(error)})`,
      ],
    };
  }
  return parseProfiles(text, checks);
}

/**
 * The file's text, parsed and checked.
 * @internal
 */
export function parseProfiles(text: string, checks: ProfileChecks = () => []): ProfilesReading {
  let raw: unknown;
  try {
    // `uniqueKeys`: a key given twice is an error, not "the last one wins".
    raw = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}` : '';
    return {
      ok: false,
      problems: [
        `not valid YAML or JSON${where}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      ],
    };
  }
  if (raw === null || raw === undefined)
    return { ok: false, problems: ['the file is empty: write `profiles:` and a list of profiles'] };
  const parsed = ProfilesFileSchema.safeParse(raw);
  if (!parsed.success) {
    // The checks too, of every profile, the ones the schema refuses included (on the parts of
    // them it would accept): shape and names are reported together, so one pass fixes the file.
    const list = (raw as { profiles?: unknown }).profiles;
    const entries: unknown[] = Array.isArray(list) ? list : [];
    const names = entries.flatMap((entry, index) =>
      checks(checkablePartsOf(entry)).map((problem) => `${profileLabel(entry, index)}: ${problem}`),
    );
    // A name used twice too (the schema's own refinement runs only on a file it otherwise accepts).
    const schema = parsed.error.issues.map((issue) => describe(issue, raw));
    return { ok: false, problems: [...new Set([...schema, ...duplicateNames(list)]), ...names] };
  }
  const problems = checked(parsed.data.profiles, checks);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, profiles: parsed.data.profiles };
}

/**
 * The parts of a raw entry the checks read, each kept only when it has the schema's shape on
 * its own: a profile with an unknown key or a bad match still has its tools and models checked
 * (a part of the wrong shape is the schema's problem, reported by it).
 */
function checkablePartsOf(entry: unknown): CheckedParts {
  if (entry === null || typeof entry !== 'object') return {};
  const fields = entry as Record<string, unknown>;
  const parts: CheckedParts = {};
  const tools = ProfileSchema.shape.tools.safeParse(fields.tools);
  if (tools.success && tools.data) parts.tools = tools.data;
  const model = ProfileSchema.shape.model.safeParse(fields.model);
  if (model.success && model.data) parts.model = model.data;
  const models = ProfileSchema.shape.models.safeParse(fields.models);
  if (models.success && models.data) parts.models = models.data;
  const allowlist = ProfileSchema.shape.shellAllowlist.safeParse(fields.shellAllowlist);
  if (allowlist.success && allowlist.data) parts.shellAllowlist = allowlist.data;
  return parts;
}

/** `profile "ops"`, or `profile 3` when the entry has no name: as the schema's problems name it. */
function profileLabel(entry: unknown, index: number): string {
  const name = entry && typeof entry === 'object' ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? `profile "${name}"` : `profile ${index + 1}`;
}

function duplicateNames(list: unknown): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const entry of Array.isArray(list) ? list : []) {
    const name: unknown = entry && typeof entry === 'object' ? (entry as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') continue;
    // The schema's words, so a file the refinement did check reads the same.
    if (seen.has(name)) problems.push(`profile "${name}": name: "${name}" is used by two profiles`);
    seen.add(name);
  }
  return problems;
}

function checked(profiles: readonly Profile[], checks: ProfileChecks): string[] {
  return profiles.flatMap((profile) => checks(profile).map((problem) => `profile "${profile.name}": ${problem}`));
}

/** `profile "ops": match.slackChannel: must be …`, or the path when the name is unknown. */
function describe(issue: z.core.$ZodIssue, raw: unknown): string {
  const [top, index, ...rest] = issue.path;
  const name = top === 'profiles' && typeof index === 'number' ? nameAt(raw, index) : undefined;
  const where =
    name !== undefined
      ? `profile "${name}"`
      : top === 'profiles' && typeof index === 'number'
        ? `profile ${index + 1}`
        : undefined;
  const key = (where ? rest : issue.path).map(String).join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
      : issue.message;
  return [where, key].filter(Boolean).join(': ') + (key || where ? ': ' : '') + message;
}

function nameAt(raw: unknown, index: number): string | undefined {
  const list = (raw as Partial<ProfilesFile> | undefined)?.profiles;
  const entry: unknown = Array.isArray(list) ? list[index] : undefined;
  const name = entry && typeof entry === 'object' ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
}
