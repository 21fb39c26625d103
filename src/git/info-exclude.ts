import fs from 'node:fs';
import path from 'node:path';

/**
 * Adds one line to the repository's `info/exclude` (shared by every worktree), under a comment,
 * unless the file has it already: how warren keeps a file of its own out of `git status` without
 * editing the user's `.gitignore`. Returns whether it wrote.
 */
export function addExcludeLine(commonDir: string, line: string, comment: string): boolean {
  const exclude = path.join(commonDir, 'info', 'exclude');
  const current = fs.existsSync(exclude) ? fs.readFileSync(exclude, 'utf8') : '';
  if (current.split('\n').includes(line)) return false;
  fs.mkdirSync(path.dirname(exclude), { recursive: true });
  fs.appendFileSync(exclude, `${current.endsWith('\n') || current === '' ? '' : '\n'}# ${comment}\n${line}\n`);
  return true;
}
