import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';

/**
 * A workspace's private git directory (`<common>/worktrees/<name>`) is writable by what runs in
 * the workspace, sandboxed or not. git writes some of its files by opening the name, following
 * a link: `COMMIT_EDITMSG`, `logs/HEAD` (appended to), `MERGE_MSG`… A link planted there makes
 * the user's next `warren checkpoint` truncate and rewrite its target (`/etc/passwd` as root,
 * `~/.ssh/authorized_keys` as a user). So before every git call in a pinned workspace
 * (src/git/exec.ts), the folder is walked by lstat and anything but files and folders refuses.
 * No command of the task runs while warren holds the task's lock (a sandboxed run's processes
 * end with it), so nothing can plant one between this check and git's write.
 */

export interface Oddity {
  /** The entry, an absolute path inside the git directory. */
  path: string;
  /** What it is instead of a file or a folder: `a link to /etc/passwd`, `a fifo`. */
  what: string;
}

/** Every entry under `dir` (walked by lstat, never following a link) that is not a regular file or a folder. */
export function oddEntries(dir: string): Oddity[] {
  const found: Oddity[] = [];
  const walk = (folder: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch (err) {
      // Gone meanwhile (git removes its lock files and MERGE_* as it goes): nothing to follow there.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isSymbolicLink()) found.push({ path: full, what: `a link to ${readLink(full)}` });
      else if (!entry.isFile()) found.push({ path: full, what: entry.isFIFO() ? 'a fifo' : 'not a regular file' });
    }
  };
  walk(dir);
  return found;
}

function readLink(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return '(unreadable)';
  }
}

/** Refuses (WORKSPACE_TAMPERED) when the git directory `gitDir` of workspace `wsPath` holds a link or another odd entry. */
export function assertNoLinks(wsPath: string, gitDir: string): void {
  const odd = oddEntries(gitDir);
  if (odd.length === 0) return;
  const named = odd
    .slice(0, 5)
    .map((o) => `${o.path} is ${o.what}`)
    .join('; ');
  throw new WarrenError(
    'WORKSPACE_TAMPERED',
    `${wsPath}'s git directory holds what git would write through: ${named}${odd.length > 5 ? ` (and ${odd.length - 5} more)` : ''}. git writes there by name, so it would write outside ${gitDir}; warren ran no git there, and nothing was changed.`,
    {
      hint: `Something in the workspace (its agent?) made ${odd.length === 1 ? 'it' : 'them'}: git never does. Look at ${odd.length === 1 ? 'it' : 'them'}, remove ${odd.length === 1 ? 'it' : 'them'} (\`rm ${odd.map((o) => o.path).join(' ')}\`; the target is left as it is), and run the command again.`,
      details: { path: wsPath, gitDir, entries: odd },
    },
  );
}
