// Merge-writes bench/results.json: a flat object of named numbers. Every suite owns its
// own keys, so a run reads the existing file and
// overwrites only the keys it produced; keys from suites that did not run survive.
// The file is git-ignored: it is a local record for comparing runs, not a fixture.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export type BenchResults = Record<string, number>;

export const RESULTS_PATH = fileURLToPath(new URL('./results.json', import.meta.url));

/** Existing results, kept as they are; a missing file is empty, an unreadable one is reported and replaced. */
async function readExisting(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    console.warn(`bench: ${path} is not valid JSON; starting it afresh`);
    return {};
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    console.warn(`bench: ${path} is not a flat JSON object; starting it afresh`);
    return {};
  }
  return parsed as Record<string, unknown>;
}

/** Overwrite `fresh`'s keys in the results file, keep every other key untouched. */
export async function mergeResults(fresh: BenchResults, path = RESULTS_PATH): Promise<void> {
  const merged = await readExisting(path);
  // JSON has no NaN or Infinity: a figure a suite could not measure is left out, not nulled.
  for (const [key, value] of Object.entries(fresh)) if (Number.isFinite(value)) merged[key] = value;
  // Write-then-rename: an interrupted run never leaves a half-written file behind.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(merged, null, 2)}\n`, 'utf8');
  await rename(temporary, path);
}
