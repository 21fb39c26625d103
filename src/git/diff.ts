import { git } from './exec.js';
import { parseNumstatZ, type NumstatEntry } from './parse.js';
import type { Repository } from './repo.js';

/** Diffs for people: per-file counts and the patch text. */

export async function numstat(repo: Repository, from: string, to: string): Promise<NumstatEntry[]> {
  const result = await git(['diff', '--numstat', '-z', '--no-color', '--no-ext-diff', '--end-of-options', `${from}...${to}`, '--'], { cwd: repo.root });
  return parseNumstatZ(result.stdout);
}

/** The patch of `from...to` (what `to` changed since it left `from`), as bytes. */
export async function patch(repo: Repository, from: string, to: string): Promise<Buffer> {
  const result = await git(['diff', '--no-color', '--no-ext-diff', '--find-renames', '--end-of-options', `${from}...${to}`, '--'], { cwd: repo.root });
  return result.stdoutBuffer;
}
