// The papers a newcomer reads first (README.md, LICENSE, package.json) against the code they
// describe: a list typed into the README is checked against the list the code uses, and a
// command the README gives is run, so neither can drift from what the bot does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config.js';
import { envFileWarning } from '../src/secrets/index.js';
import { BUILTIN_TOOL_NAMES } from '../src/tools/index.js';
import { tempDir } from './support/test-connector.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(`${ROOT}/README.md`, 'utf8');

/** The code spans (`…`) of a piece of Markdown, in order. */
function codeSpans(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
}

/** The settings table of docs/configuration.md, one row per line. */
function configurationRows(): string[] {
  return readFileSync(`${ROOT}/docs/configuration.md`, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'));
}

describe('docs/configuration.md', () => {
  it('the DISABLED_TOOLS row names exactly the built-in tools the code registers', () => {
    const row = configurationRows().find((line) => line.startsWith('| `DISABLED_TOOLS` |'));
    expect(row, 'the Configuration table has a DISABLED_TOOLS row').toBeDefined();
    const listed = row!.match(/\(of ([^)]*)\)/)?.[1];
    expect(listed, 'the row lists the tools as "(of `a`, `b`, …)"').toBeDefined();
    expect(codeSpans(listed!)).toEqual([...BUILTIN_TOOL_NAMES]);
  });

  it('the Configuration table has a row for every setting the code reads, and none it does not', () => {
    const documented = configurationRows().flatMap((line) => codeSpans(line.split('|')[1]!));
    expect([...documented].sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
  });
});

describe('README.md: creating .env', () => {
  it('every command the README gives for it makes a file only its owner can read, which start-up does not warn about', async () => {
    const commands = codeSpans(README).filter((span) => /\.env\.example\s+\.env$/.test(span));
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      const dir = await tempDir();
      try {
        await writeFile(join(dir.path, '.env.example'), 'MODEL=\n');
        // A usual umask: a plain copy would come out 644.
        execFileSync('/bin/sh', ['-c', `umask 022 && ${command}`], { cwd: dir.path });
        expect((await stat(join(dir.path, '.env'))).mode & 0o777, command).toBe(0o600);
        expect(envFileWarning(join(dir.path, '.env')), command).toBeNull();
      } finally {
        await dir.remove();
      }
    }
  });
});

describe('LICENSE', () => {
  it('is the MIT licence, and package.json says so', () => {
    const license = readFileSync(`${ROOT}/LICENSE`, 'utf8');
    expect(license.split('\n')[0]).toBe('MIT License');
    expect(license).toContain('Copyright (c) 2026 The chat-agent contributors');
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { license?: string };
    expect(pkg.license).toBe('MIT');
  });
});


/** A Markdown heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('SECURITY.md and CHANGELOG.md', () => {
  it('SECURITY.md says how to report privately, and every README section it points at exists', () => {
    const security = readFileSync(`${ROOT}/SECURITY.md`, 'utf8');
    expect(security).toContain('**Report a vulnerability**');
    expect(security).toMatch(/## In scope[\s\S]*## Out of scope/);
    const anchors = new Set([...README.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
    const linked = [...security.matchAll(/\(README\.md#([^)]+)\)/g)].map((match) => match[1]!);
    expect(linked.length).toBeGreaterThan(3);
    for (const anchor of linked) expect(anchors.has(anchor), `README.md#${anchor}`).toBe(true);
  });

  it('CHANGELOG.md keeps an Unreleased section above the releases, each release dated', () => {
    const changelog = readFileSync(`${ROOT}/CHANGELOG.md`, 'utf8');
    const versions = [...changelog.matchAll(/^## \[([^\]]+)\](.*)$/gm)].map((match) => [match[1], match[2]]);
    expect(versions[0]).toEqual(['Unreleased', '']);
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };
    expect(versions.map(([version]) => version)).toContain(pkg.version);
    for (const [, date] of versions.slice(1)) expect(date).toMatch(/^ - \d{4}-\d{2}-\d{2}$/);
  });
});
