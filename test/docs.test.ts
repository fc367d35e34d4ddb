// The papers a newcomer reads first (README.md, LICENSE, package.json) against the code they
// describe: a list typed into the README is checked against the list the code uses, and a
// command the README gives is run, so neither can drift from what the bot does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config.js';
import { BUILTIN_TOOL_NAMES } from '../src/tools/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(`${ROOT}/README.md`, 'utf8');

/** The code spans (`…`) of a piece of Markdown, in order. */
function codeSpans(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
}

/** The README's "Configuration" table, one row per line. */
function configurationRows(): string[] {
  const section = README.slice(README.indexOf('## Configuration'));
  return section.split('\n').filter((line) => line.startsWith('| `'));
}

describe('README.md', () => {
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

