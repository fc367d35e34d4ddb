// The papers a newcomer reads first (README.md, the pages in docs/, LICENSE, package.json)
// against the code they describe: a list typed into a page is checked against the list the code
// uses, and a command a page gives is run, so neither can drift from what the bot does.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config.js';
import { envFileWarning } from '../src/secrets/index.js';
import { commandUsage, THREAD_COMMANDS } from '../connectors/shared/command-table.js';
import { BUILTIN_TOOL_NAMES } from '../src/tools/index.js';
import { tempDir } from './support/test-connector.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(`${ROOT}/README.md`, 'utf8');
/** The documentation pages, by their path from the repository's root (`docs/using.md`). */
const DOC_PAGES = readdirSync(`${ROOT}/docs`)
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

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

describe('README.md and docs/: creating .env', () => {
  it('every command the README and the pages give for it makes a file only its owner can read, which start-up does not warn about', async () => {
    const envCommands = (markdown: string): string[] =>
      codeSpans(markdown).filter((span) => /\.env\.example\s+\.env$/.test(span));
    expect(envCommands(README).length, 'the README says how to make .env').toBeGreaterThan(0);
    const commands = [README, ...DOC_PAGES.map((page) => readFileSync(`${ROOT}/${page}`, 'utf8'))].flatMap(envCommands);
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

/** A page's text with its fenced code blocks blanked out: a `#` or a `](` in code is no heading or link. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** The anchors a page's headings get, a repeated one numbered as GitHub numbers it (`-1`, `-2`). */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of prose(readFileSync(`${ROOT}/${path}`, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const anchor = anchorOf(match[1]!);
    let unique = anchor;
    for (let n = 1; anchors.has(unique); n += 1) unique = `${anchor}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** Every relative link of a page (`[words](target)`), as a path from the root and an optional anchor. */
function relativeLinks(page: string): { target: string; file: string; anchor?: string }[] {
  const dir = page.includes('/') ? page.slice(0, page.lastIndexOf('/')) : '';
  return [...prose(readFileSync(`${ROOT}/${page}`, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : join(dir, path).replace(/\/$/, '');
      return { target, file, anchor };
    });
}

/** What is wrong with a page's relative links: a missing file, or an anchor no heading there makes. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const link of relativeLinks(page)) {
    let exists = true;
    try {
      readdirSync(`${ROOT}/${link.file}`);
    } catch {
      try {
        readFileSync(`${ROOT}/${link.file}`);
      } catch {
        exists = false;
      }
    }
    if (!exists) broken.push(`${page}: ${link.target} (no file ${link.file})`);
    else if (link.anchor !== undefined && link.file.endsWith('.md') && !anchorsOf(link.file).has(link.anchor))
      broken.push(`${page}: ${link.target} (no heading #${link.anchor} in ${link.file})`);
  }
  return broken;
}

describe('README.md and the pages in docs/', () => {
  it('the README stays short: at most 150 lines, the rest is in docs/', () => {
    expect(README.split('\n').length - (README.endsWith('\n') ? 1 : 0)).toBeLessThanOrEqual(150);
  });

  it('every relative link in the README and in docs/*.md leads to a file that exists, and to a heading there when it names one', () => {
    const pages = ['README.md', ...DOC_PAGES];
    expect(pages).toContain('docs/configuration.md');
    expect(pages.flatMap(relativeLinks).length).toBeGreaterThan(20);
    expect(pages.flatMap(brokenLinks)).toEqual([]);
  });

  it("the README's command table lists the thread commands of the one command table, in its order, each alias after its command", () => {
    const header = README.indexOf('| command | what it does |');
    expect(header, 'the README has a table of thread commands').toBeGreaterThanOrEqual(0);
    const rows = README.slice(header).split('\n').slice(2);
    const listed = rows
      .slice(
        0,
        rows.findIndex((line) => !line.startsWith('|')),
      )
      .map((line) => /^\| `([^`]+)`/.exec(line.replace(/\\\|/g, '|'))?.[1]);
    const expected = THREAD_COMMANDS.flatMap((command) => [
      commandUsage(command),
      ...(command.aliases ?? []).map((alias) => `/${alias}`),
    ]);
    expect(listed).toEqual(expected);
  });
});

describe('SECURITY.md and CHANGELOG.md', () => {
  it('SECURITY.md says how to report privately, and every page section it points at exists', () => {
    const security = readFileSync(`${ROOT}/SECURITY.md`, 'utf8');
    expect(security).toContain('**Report a vulnerability**');
    expect(security).toMatch(/## In scope[\s\S]*## Out of scope/);
    const sections = relativeLinks('SECURITY.md').filter((link) => link.anchor !== undefined);
    expect(sections.length).toBeGreaterThan(3);
    expect(brokenLinks('SECURITY.md')).toEqual([]);
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
