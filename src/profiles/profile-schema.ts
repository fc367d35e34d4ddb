// The PROFILES file's shape: a list of profiles, each matching a place (a Slack channel or
// workspace, a Discord channel or server, DMs, the playground) and setting how the bot works
// there. Strict: an unknown key is an error, so a typo never silently does nothing (a
// per-channel prompt "silently ignored" is the complaint peers hear most).
//
// What the schema cannot say (a tool or MCP server that exists, a model whose provider is
// known, an allow-list entry the policy accepts) is checked by profile-checks.ts, with every
// problem reported at once.
import { z } from 'zod';
import { limitSetting } from '../ops/spend/budget-limits.js';

const ID = /^[A-Za-z0-9._:@-]+$/;
const ID_RULE = 'must be a platform id (letters, digits, . _ : @ -)';
const id = z.string().trim().regex(ID, ID_RULE);

/** Why a place's value is not an id, or undefined. `name`: what a name given instead says (the commonest mistake is `#general`). */
type IdRule = (value: string) => string | undefined;
const platformId: IdRule = (value) => (ID.test(value) ? undefined : ID_RULE);
/** Slack's ids are upper case (C0123ABCD, T0123ABCD): `#general` or `general` is the place's name. */
const slackId =
  (key: string, what: string, form: string, where: string): IdRule =>
  (value) =>
    value.startsWith('#') || /[a-z]/.test(value)
      ? `"${value}" is a ${what}'s name: ${key} wants the ${what}'s id, ${form} (${where})`
      : platformId(value);
/** Discord's ids are numbers; names are not refused (tests and mirrors use others), but `#name` is surely one. */
const discordId =
  (key: string, what: string, where: string): IdRule =>
  (value) =>
    value.startsWith('#')
      ? `"${value}" is a ${what}'s name: ${key} wants the ${what}'s id, digits (${where})`
      : platformId(value);

/**
 * One id or a list of them: `slackChannel: C0OPS` or `slackChannel: [C0OPS, C0SRE]`, always a
 * list once read. One schema for both forms (not a union of two), so a bad id is reported with
 * the rule's own words rather than a union's "Invalid input".
 */
function ids(rule: IdRule) {
  return z.union([z.string(), z.array(z.string()).min(1)]).transform((value, context) => {
    const list = (typeof value === 'string' ? [value] : value).map((one) => one.trim());
    list.forEach((one, index) => {
      const problem = rule(one);
      if (problem)
        context.addIssue({ code: 'custom', message: problem, path: typeof value === 'string' ? [] : [index] });
    });
    return list;
  });
}

const ProfileMatchSchema = z
  .object({
    slackChannel: ids(
      slackId('slackChannel', 'channel', 'C…', "in Slack: the channel's name → About, at the bottom"),
    ).optional(),
    slackTeam: ids(
      slackId('slackTeam', 'workspace', 'T…', 'in Slack: the workspace menu → Settings, or the T… in its app URLs'),
    ).optional(),
    discordChannel: ids(
      discordId(
        'discordChannel',
        'channel',
        'in Discord, with Developer Mode on: right-click the channel → Copy Channel ID',
      ),
    ).optional(),
    discordGuild: ids(platformId).optional(),
    dm: z.literal(true).optional(),
    playground: z.literal(true).optional(),
  })
  .strict()
  .refine(
    (match) => Object.keys(match).length > 0,
    'names no place: give slackChannel, slackTeam, discordChannel, discordGuild, dm: true or playground: true',
  );
export type ProfileMatch = z.infer<typeof ProfileMatchSchema>;

const modelName = z.string().trim().min(1);

export const ProfileSchema = z
  .object({
    /** Shown by /status; unique in the file; `default` is the environment's own. */
    name: z
      .string()
      .trim()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/,
        'must be 1 to 40 letters, digits, - or _, starting with a letter or digit',
      )
      .refine((name) => name !== 'default', '`default` is the environment’s own profile; name yours otherwise'),
    match: ProfileMatchSchema,
    /** Added to the system message (append, the default) or replacing it. */
    instructions: z.string().trim().min(1).max(20_000).optional(),
    instructionsMode: z.enum(['append', 'replace']).optional(),
    /** The model new threads here start with. */
    model: modelName.optional(),
    /** What /model may choose here (default: the environment's MODELS). */
    models: z.array(modelName).min(1).optional(),
    /** Every tool the model may be offered here, by name (built-ins, ask_user and the like, MCP `server__tool` or a whole MCP server by its name); omitted: all. */
    tools: z.array(z.string().trim().min(1)).optional(),
    permissionMode: z.enum(['interactive', 'auto', 'read-only']).optional(),
    /** Shell commands that run without asking here (SHELL_ALLOWLIST's entries). */
    shellAllowlist: z.array(z.string().trim().min(1)).optional(),
    /** Who approves and manages threads here, besides ADMINS; each must be a member under ALLOWED_USERS. */
    admins: z.array(id).optional(),
    /** Who may start or steer here: narrows ALLOWED_USERS (never widens it). */
    allowedUsers: z.array(id).min(1).optional(),
    /** Whose files a conversation sees here, and the folder under WORKSPACE_DIR it works in. */
    workspace: z
      .object({
        scope: z.enum(['thread', 'channel', 'shared']).optional(),
        folder: z
          .string()
          .trim()
          .regex(
            /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/,
            'must be a folder inside WORKSPACE_DIR, e.g. ops or teams/ops (no .., no leading /)',
          )
          .refine(
            (folder) => !folder.split('/').some((part) => part === '.' || part === '..'),
            'must stay inside WORKSPACE_DIR (no . or .. parts)',
          )
          .optional(),
      })
      .strict()
      .optional(),
    /** Spend limits here, in BUDGET_*'s words ("$5", "2M tokens"): they replace the environment's for this place. */
    budgets: z
      .object({
        userDaily: limitSetting.optional(),
        channelDaily: limitSetting.optional(),
        turn: limitSetting.optional(),
      })
      .strict()
      .optional(),
    /** Slack: the name and icon the bot posts with here (needs the chat:write.customize scope). */
    identity: z
      .object({
        name: z.string().trim().min(1).max(80).optional(),
        iconUrl: z.url({ protocol: /^https$/ }).optional(),
        iconEmoji: z
          .string()
          .trim()
          .regex(/^:[a-z0-9_+-]+:$/, 'must be an emoji name such as :robot_face:')
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type Profile = z.infer<typeof ProfileSchema>;

export const ProfilesFileSchema = z
  .object({ profiles: z.array(ProfileSchema) })
  .strict()
  .superRefine((file, context) => {
    const seen = new Set<string>();
    file.profiles.forEach((profile, index) => {
      if (seen.has(profile.name))
        context.addIssue({
          code: 'custom',
          path: ['profiles', index, 'name'],
          message: `"${profile.name}" is used by two profiles`,
        });
      seen.add(profile.name);
    });
  });
export type ProfilesFile = z.infer<typeof ProfilesFileSchema>;
