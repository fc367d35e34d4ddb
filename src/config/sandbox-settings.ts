// How far the tools reach: where shell commands run and what they may read, write, use and
// spend (src/sandbox/), and which networks fetch_url may reach.
import { z } from 'zod';
import { settingDocs } from './setting-docs.js';
import { positiveInt } from './setting-values.js';

export const sandboxSettings = {
  SHELL_TIMEOUT_MS: positiveInt.default(120_000).register(settingDocs, {
    section: 'Tools and shell',
    description: 'a shell command is stopped after this long',
  }),
  SHELL_SANDBOX: z
    .enum(['auto', 'bwrap', 'off'])
    .default('auto')
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'where commands run: `auto` (in the bubblewrap sandbox; if it cannot run here, `run_shell` is not offered ' +
        'and one start-up line says why), `bwrap` (the sandbox, or the bot does not start), `off` (unconfined, ' +
        'see below)',
    }),
  SHELL_NETWORK: z
    .enum(['on', 'off', 'true', 'false'])
    .default('off')
    .transform((value) => value === 'on' || value === 'true')
    .register(settingDocs, {
      section: 'Tools and shell',
      description: '`on` lets sandboxed commands reach the network (every `run_shell` approval card then says so)',
    }),
  SHELL_ENV: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        "variables handed to commands besides `PATH`, `LANG`, `LC_*`, `TZ` (comma-separated names; the bot's own " +
        'secret settings are refused)',
      unset: 'none',
    }),
  SHELL_READ_PATHS: z
    .string()
    .optional()
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'extra folders commands may read, absolute, comma-separated: toolchains outside `/usr` ' +
        "(`/home/bot/.nvm`); never the home folder itself or the bot's files. Their programs are on commands' " +
        "`PATH` where the bot's own `PATH` names a folder inside them, and each one's `bin/`",
      unset: 'none',
    }),
  SHELL_RUN_AS: z
    .string()
    .regex(/^\d+:\d+$/, 'must be uid:gid, e.g. 65534:65534')
    .refine((value) => !value.split(':').includes('0'), 'must not be 0 (root): commands run as an unprivileged user')
    .optional()
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'when the bot runs as root: the unprivileged `uid:gid` sandboxed commands run as (never `0`); ignored, ' +
        "with a note, when the bot is not root (commands then run as the bot's own uid). See [The shell " +
        'sandbox](security.md#the-shell-sandbox)',
      unset: '`65534:65534` (nobody)',
    }),
  SHELL_MAX_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(256)
    .default(4096)
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'memory of one command, in MB: all its processes together where the bot may make a memory cgroup (the ' +
        'start-up line says), and the address space of each (at least 256; Node needs about 1024 to start)',
    }),
  SHELL_TMP_MB: positiveInt.default(512).register(settingDocs, {
    section: 'Tools and shell',
    description: "size of a command's private `/tmp` (and of its `/dev/shm`), in MB",
  }),
  FETCH_ALLOW_PRIVATE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .register(settingDocs, {
      section: 'Tools and shell',
      description:
        'let `fetch_url` reach localhost and private addresses (`true`); by default only public addresses, ' +
        'checked after name resolution, and a redirect to another site is reported, not followed',
    }),
};
