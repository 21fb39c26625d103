import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { isInside } from '../util/paths.js';

/**
 * A file a reviewer names (`warren comment ID FILE:LINE`), inside the task's workspace. Threat:
 * the workspace is the agent's to write; a symlink in it (`link -> /etc`) would make
 * `link/shadow:1` quote a file of the machine into the comment, which the command line, the
 * dashboard and the agent's next prompt all show. So each component that exists is resolved
 * and must stay in the workspace, and the file is read through the descriptor it was opened
 * with, whose real path is checked again (a link swapped in after the first check).
 */

/** Refuses (USAGE, nothing recorded) a workspace-relative path that leaves `workspace` through a symlink. */
export function checkInsideWorkspace(workspace: string, rel: string): void {
  let at = workspace;
  const typed: string[] = [];
  for (const part of rel.split('/').filter((p) => p !== '' && p !== '.')) {
    const next = path.join(at, part);
    typed.push(part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      return; // the rest does not exist: nothing there to read
    }
    if (!stat.isSymbolicLink()) {
      at = next;
      continue;
    }
    let real: string | null;
    try {
      real = fs.realpathSync(next);
    } catch {
      real = null;
    }
    if (real === null || !isInside(workspace, real)) throw leaves(rel, typed.join('/'), real);
    at = real;
  }
}

/** The file's text, or null when it is not a regular file of the workspace (missing, a folder, a fifo). */
export function readWorkspaceFile(workspace: string, rel: string): string | null {
  checkInsideWorkspace(workspace, rel);
  let fd: number;
  try {
    // O_NONBLOCK: a fifo put there must not hang the command.
    fd = fs.openSync(path.join(workspace, rel), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const opened = openedPath(fd, path.join(workspace, rel), stat);
    if (opened === null || !isInside(workspace, opened)) throw leaves(rel, rel, opened);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** Where the open file really is: its /proc/self/fd link, else the path's real location if it is the same file. */
function openedPath(fd: number, full: string, stat: fs.Stats): string | null {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    try {
      const real = fs.realpathSync(full);
      const now = fs.statSync(real);
      return now.dev === stat.dev && now.ino === stat.ino ? real : null;
    } catch {
      return null;
    }
  }
}

function leaves(rel: string, link: string, real: string | null): WarrenError {
  return new WarrenError(
    'USAGE',
    `${JSON.stringify(rel)} leaves the task's workspace: ${link} is a symlink ${real === null ? 'that does not resolve' : `to ${real}`}; nothing was recorded.`,
    {
      hint: 'Comment on a file inside the workspace, named as the diff names it (`warren diff ID`).',
      details: { path: rel, link, ...(real === null ? {} : { realPath: real }) },
    },
  );
}
