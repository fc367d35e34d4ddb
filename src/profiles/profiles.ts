// The profiles as the rest of the bot reads them: the session layer's view (access, the
// starting model, /model's list: SessionProfiles) and the engine's (instructions, tools,
// permission mode, shell allow-list, folder, budgets, Slack identity), each a profile from
// the file laid over the environment's own settings. `default` is the environment alone.
import { resolve } from 'node:path';
import type { ModelMenu } from '../sessions/session-profiles.js';
import type { SessionProfile, SessionProfiles } from '../sessions/session-profiles.js';
import type { SessionKey } from '../store/session-store.js';
import type { PermissionMode } from '../permissions/index.js';
import type { LimitAmount } from '../ops/spend/budget-limits.js';
import { DEFAULT_PROFILE, type ProfileBook } from './profile-book.js';
import type { Profile } from './profile-schema.js';

/** The environment's settings a profile may override. */
export interface ProfileEnvironment {
  model: string;
  /** MODELS' menu (modelMenu over the environment). */
  models: ModelMenu;
  /** A menu of a profile's own list (modelMenu with those names). */
  menuOf: (models: readonly string[], defaultModel: string) => ModelMenu;
  systemPrompt: string;
  permissionMode: PermissionMode;
  shellAllowlist: readonly string[];
  workspaceScope: 'thread' | 'channel' | 'shared';
}

/** What the engine of a thread under a profile is built with (core.ts engineSetup). */
export interface ProfileSettings {
  name: string;
  instructions: string;
  /** Every tool the model may be offered, by name or MCP server; undefined: all. */
  tools?: ReadonlySet<string>;
  permissionMode: PermissionMode;
  shellAllowlist: readonly string[];
  workspaceScope: 'thread' | 'channel' | 'shared';
  /** A folder under WORKSPACE_DIR this profile's conversations work in; undefined: WORKSPACE_DIR. */
  workspaceFolder?: string;
  budgets?: { userDaily?: LimitAmount; channelDaily?: LimitAmount; turn?: LimitAmount };
  identity?: { name?: string; iconUrl?: string; iconEmoji?: string };
}

/** Whether a tool is offered under `tools`: by its name, or its MCP server's (`server__tool` under `server`). */
export function offers(tools: ReadonlySet<string> | undefined, name: string): boolean {
  if (!tools || tools.has(name)) return true;
  const split = name.indexOf('__');
  return split > 0 && tools.has(name.slice(0, split));
}

export class Profiles implements SessionProfiles {
  /** Each profile's two views, made once per file version: access checks and every Slack post read them. */
  private views = new Map<string, { session: SessionProfile; engine: ProfileSettings }>();
  private viewsVersion = -1;

  constructor(
    readonly book: ProfileBook,
    private readonly env: ProfileEnvironment,
  ) {}

  get version(): number {
    return this.book.version;
  }

  forPlace(key: SessionKey): SessionProfile {
    return this.viewsOf(this.book.match(key)).session;
  }

  named(name: string | undefined): SessionProfile {
    return this.viewsOf(this.book.named(name)).session;
  }

  names(): string[] {
    return [DEFAULT_PROFILE, ...this.book.all().map((profile) => profile.name)];
  }

  /** The engine's settings for a thread that keeps `name` (the environment's own when the file no longer has it). */
  settingsOf(name: string | undefined): ProfileSettings {
    return this.viewsOf(this.book.named(name)).engine;
  }

  /** The settings of the profile a place has now (Slack identity and budgets follow the place). */
  settingsAt(place: { platform: string; workspace: string; channel: string }): ProfileSettings {
    return this.viewsOf(this.book.match(place)).engine;
  }

  /** Every folder a thread's files may be in (the environment's and each profile's, with its scope): /forget and retention look in each. */
  folders(workspaceDir: string): { workspaceDir: string; scope: 'thread' | 'channel' | 'shared' }[] {
    const seen = new Map<string, { workspaceDir: string; scope: 'thread' | 'channel' | 'shared' }>();
    for (const settings of [undefined, ...this.book.all()].map((profile) => this.viewsOf(profile).engine)) {
      const dir = settings.workspaceFolder ? resolve(workspaceDir, settings.workspaceFolder) : workspaceDir;
      seen.set(`${dir}\0${settings.workspaceScope}`, { workspaceDir: dir, scope: settings.workspaceScope });
    }
    return [...seen.values()];
  }

  private viewsOf(profile: Profile | undefined): { session: SessionProfile; engine: ProfileSettings } {
    if (this.viewsVersion !== this.book.version) {
      this.views = new Map();
      this.viewsVersion = this.book.version;
    }
    const name = profile?.name ?? DEFAULT_PROFILE;
    let views = this.views.get(name);
    if (!views) {
      views = { session: this.sessionView(profile), engine: this.engineView(profile) };
      this.views.set(name, views);
    }
    return views;
  }

  private sessionView(profile: Profile | undefined): SessionProfile {
    if (!profile) return { name: DEFAULT_PROFILE, admins: new Set(), models: this.env.models };
    return {
      name: profile.name,
      admins: new Set(profile.admins ?? []),
      ...(profile.allowedUsers ? { allowedUsers: new Set(profile.allowedUsers) } : {}),
      ...(profile.model ? { model: profile.model } : {}),
      models: this.menuFor(profile),
    };
  }

  private engineView(profile: Profile | undefined): ProfileSettings {
    const env = this.env;
    if (!profile)
      return {
        name: DEFAULT_PROFILE,
        instructions: env.systemPrompt,
        permissionMode: env.permissionMode,
        shellAllowlist: env.shellAllowlist,
        workspaceScope: env.workspaceScope,
      };
    const instructions =
      profile.instructions === undefined
        ? env.systemPrompt
        : profile.instructionsMode === 'replace'
          ? profile.instructions
          : `${env.systemPrompt}\n\n${profile.instructions}`;
    return {
      name: profile.name,
      instructions,
      ...(profile.tools ? { tools: new Set(profile.tools) } : {}),
      permissionMode: profile.permissionMode ?? env.permissionMode,
      shellAllowlist: profile.shellAllowlist ?? env.shellAllowlist,
      workspaceScope: profile.workspace?.scope ?? env.workspaceScope,
      ...(profile.workspace?.folder ? { workspaceFolder: profile.workspace.folder } : {}),
      ...(profile.budgets ? { budgets: profile.budgets } : {}),
      ...(profile.identity ? { identity: profile.identity } : {}),
    };
  }

  /** A profile's /model list: its `models`, else MODELS, with its own model always on it (a thread can switch back to it). */
  private menuFor(profile: Profile): ModelMenu {
    const defaultModel = profile.model ?? this.env.model;
    const listed = profile.models ?? (profile.model ? this.env.models.available : undefined);
    return listed ? this.env.menuOf([...new Set([...listed, defaultModel])], defaultModel) : this.env.models;
  }
}
