// The PROFILES file's schema and checks: YAML and JSON both, unknown keys refused, every
// problem reported at once with the profile's name and the key, and what only the bot knows
// (tools, MCP servers, model providers, allow-list entries) checked with the real names.
// The repository's profiles.example.yaml parses with the real checks too.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { knownNames } from '../../src/profiles/known-names.js';
import { profileChecks } from '../../src/profiles/profile-checks.js';
import { parseProfiles, readProfilesFile } from '../../src/profiles/profile-file.js';

const checks = profileChecks(
  knownNames({
    mcpServers: ['github'],
    policy: { mode: 'interactive', shellAllowList: [] },
    workspaceRoot: tmpdir(),
    settings: { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' },
  }),
);
const problemsOf = (text: string): string[] => {
  const reading = parseProfiles(text, checks);
  return reading.ok ? [] : reading.problems;
};

describe('the PROFILES file', () => {
  it('YAML and JSON give the same profiles; one id or a list of ids', () => {
    const yaml = parseProfiles(
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '    tools: [read_file, github__create_issue]',
        '  - name: both',
        '    match: { discordChannel: ["1", "2"] }',
      ].join('\n'),
      checks,
    );
    const json = parseProfiles(
      JSON.stringify({
        profiles: [
          { name: 'ops', match: { slackChannel: 'C0OPS' }, tools: ['read_file', 'github__create_issue'] },
          { name: 'both', match: { discordChannel: ['1', '2'] } },
        ],
      }),
      checks,
    );
    expect(yaml).toEqual(json);
    expect(yaml).toEqual({
      ok: true,
      profiles: [
        { name: 'ops', match: { slackChannel: ['C0OPS'] }, tools: ['read_file', 'github__create_issue'] },
        { name: 'both', match: { discordChannel: ['1', '2'] } },
      ],
    });
  });

  it("every schema problem at once, each with the profile's name (or its place) and the key", () => {
    const problems = problemsOf(
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '    instructionMode: replace', // a typo of instructionsMode
        '    permissionMode: yolo',
        '  - name: sup',
        '    match: { slackChannel: C0SUP }',
        '    workspace: { folder: ../x }',
        '    identity: { iconEmoji: robot }',
        '  - match: { dm: true }',
        '  - name: ops',
        '    match: { playground: true }',
        'extra: 1',
      ].join('\n'),
    );
    expect(problems).toEqual([
      'profile "ops": permissionMode: Invalid option: expected one of "interactive"|"auto"|"read-only"',
      'profile "ops": unknown key "instructionMode"',
      'profile "sup": workspace.folder: must stay inside WORKSPACE_DIR (no . or .. parts)',
      'profile "sup": identity.iconEmoji: must be an emoji name such as :robot_face:',
      'profile 3: name: Invalid input: expected string, received undefined',
      'unknown key "extra"',
      // Reported with the rest, though the schema checks names only in a file it otherwise accepts.
      'profile "ops": name: "ops" is used by two profiles',
    ]);
  });

  it('a folder must be a plain path inside WORKSPACE_DIR', () => {
    for (const folder of ['../x', '/etc', 'a/../../b', 'a//b', './a']) {
      const problems = problemsOf(
        `profiles:\n  - name: p\n    match: { dm: true }\n    workspace: { folder: "${folder}" }\n`,
      );
      expect(problems, folder).toHaveLength(1);
      expect(problems[0], folder).toMatch(
        /^profile "p": workspace\.folder: must (be a folder inside|stay inside) WORKSPACE_DIR/,
      );
    }
    expect(
      problemsOf(
        'profiles:\n  - name: p\n    match: { dm: true }\n    workspace: { folder: teams/ops, scope: channel }\n',
      ),
    ).toEqual([]);
  });

  it('a match that names no place, or a key given twice, is refused', () => {
    expect(problemsOf('profiles:\n  - name: p\n    match: {}\n')).toEqual([
      'profile "p": match: names no place: give slackChannel, slackTeam, discordChannel, discordGuild, dm: true or playground: true',
    ]);
    expect(
      problemsOf(
        'profiles:\n  - name: p\n    match: { dm: true }\n    model: openai:gpt-4.1\n    model: openai:gpt-4o\n',
      ),
    ).toEqual([expect.stringMatching(/^not valid YAML or JSON at line 5: Map keys must be unique/)]);
  });

  it('the checks: an unknown tool, an unknown MCP server (server__tool and bare), a bad model, a bad allow-list entry', () => {
    const problems = problemsOf(
      [
        'profiles:',
        '  - name: ops',
        '    match: { slackChannel: C0OPS }',
        '    tools: [read_file, ask_user, propose_plan, request_directory, attach_file, schedule_task, github, github__x, gitlab__x, gitlab, rm_rf]',
        '    model: "anthropic:"',
        '    models: [openai:gpt-4.1, "demo:x"]',
        '    shellAllowlist: [git status, "ls; rm -rf /"]',
      ].join('\n'),
    );
    expect(problems).toEqual([
      'profile "ops": tools: "gitlab__x" names the MCP server "gitlab", which the MCP config (MCP_CONFIG) does not have (it has: github)',
      expect.stringMatching(
        /^profile "ops": tools: "gitlab" is neither a tool nor an MCP server \(tools: ask_user, attach_file, .*; MCP servers: github\)$/,
      ),
      expect.stringMatching(/^profile "ops": tools: "rm_rf" is neither a tool nor an MCP server/),
      'profile "ops": model: "anthropic:": "anthropic:" names a provider but no model (e.g. anthropic:<model id>)',
      'profile "ops": models: "demo:x": "demo:x": the built-in demo model is named just "demo"',
      expect.stringMatching(
        /^profile "ops": shellAllowlist: invalid shell allow-list entry "ls; rm -rf \/": it contains/,
      ),
    ]);
  });

  it('a model whose provider has no key in the environment is refused, as MODEL would be', () => {
    const noAnthropic = profileChecks(
      knownNames({
        mcpServers: [],
        policy: { mode: 'interactive', shellAllowList: [] },
        workspaceRoot: tmpdir(),
        settings: { OPENAI_API_KEY: 'sk-test' },
      }),
    );
    const reading = parseProfiles(
      'profiles:\n  - name: p\n    match: { dm: true }\n    model: anthropic:claude-sonnet-4-6\n    models: [bogus:model]\n',
      noAnthropic,
    );
    expect(reading).toEqual({
      ok: false,
      problems: [
        'profile "p": model: "anthropic:claude-sonnet-4-6": it uses Anthropic, and ANTHROPIC_API_KEY is not set (set it; or ANTHROPIC_BASE_URL for a server that needs none)',
        expect.stringMatching(/^profile "p": models: "bogus:model": unknown provider "bogus"/),
      ],
    });
  });

  it('a profile the schema refuses still has its names checked, in the same report: one pass fixes the file', () => {
    expect(
      problemsOf(
        'profiles:\n  - name: a\n    match: { dm: true }\n    colour: red\n    tools: [nope]\n  - name: b\n    match: { playground: true }\n    tools: [nope_either]\n',
      ),
    ).toEqual([
      'profile "a": unknown key "colour"',
      expect.stringMatching(/^profile "a": tools: "nope" is neither a tool nor an MCP server/),
      expect.stringMatching(/^profile "b": tools: "nope_either" is neither a tool nor an MCP server/),
    ]);
    // Shape and names of one profile together; a part of the wrong shape is the schema's alone.
    expect(
      problemsOf(
        'profiles:\n  - name: c\n    match: { slackChannel: "#general" }\n    model: "bogus:model"\n    models: oops\n    shellAllowlist: ["git status && rm -rf /"]\n  - match: { dm: true }\n    tools: [nope_three]\n',
      ),
    ).toEqual([
      expect.stringMatching(/^profile "c": match\.slackChannel: /),
      'profile "c": models: Invalid input: expected array, received string',
      'profile 2: name: Invalid input: expected string, received undefined',
      expect.stringMatching(/^profile "c": model: "bogus:model": unknown provider "bogus"/),
      expect.stringMatching(/^profile "c": shellAllowlist: invalid shell allow-list entry "git status && rm -rf \/"/),
      expect.stringMatching(/^profile 2: tools: "nope_three" is neither a tool nor an MCP server/),
    ]);
  });

  it("a Slack channel given by its name says the key wants the channel's id (C…)", () => {
    const problems = problemsOf(
      'profiles:\n  - name: ops\n    match: { slackChannel: ["#general", "random", C0OPS] }\n  - name: sup\n    match: { discordChannel: "#support" }\n',
    );
    expect(problems).toEqual([
      'profile "ops": match.slackChannel.0: "#general" is a channel\'s name: slackChannel wants the channel\'s id, C… (in Slack: the channel\'s name → About, at the bottom)',
      'profile "ops": match.slackChannel.1: "random" is a channel\'s name: slackChannel wants the channel\'s id, C… (in Slack: the channel\'s name → About, at the bottom)',
      'profile "sup": match.discordChannel: "#support" is a channel\'s name: discordChannel wants the channel\'s id, digits (in Discord, with Developer Mode on: right-click the channel → Copy Channel ID)',
    ]);
  });

  it('an empty file, a missing file, and no list', async () => {
    expect(problemsOf('')).toEqual(['the file is empty: write `profiles:` and a list of profiles']);
    expect(problemsOf('profiles: ops')).toEqual([expect.stringMatching(/^profiles: /)]);
    expect(await readProfilesFile('/nonexistent/profiles.yaml')).toEqual({
      ok: false,
      problems: ['the file /nonexistent/profiles.yaml does not exist'],
    });
  });

  it("profiles.example.yaml at the repository's root parses, and passes the real checks with the built-in names", () => {
    const text = readFileSync(new URL('../../profiles.example.yaml', import.meta.url), 'utf8');
    const reading = parseProfiles(text, checks);
    expect(reading.ok ? [] : reading.problems).toEqual([]);
    expect(reading.ok && reading.profiles.map((profile) => profile.name)).toEqual(
      expect.arrayContaining(['ops', 'support', 'random']),
    );
  });
});
