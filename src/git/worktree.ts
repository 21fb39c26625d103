import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../errors.js';
import { git, type Worktree } from './exec.js';

export type { Where, Worktree } from './exec.js';
export { folderOf } from './exec.js';
import { splitZ } from './parse.js';

/**
 * A linked worktree of the repository as warren made it, for the git calls warren makes in it
 * on the user's behalf. Whatever runs in a workspace (its agent) can write the workspace's
 * `.git` file and, unsandboxed, its private git directory: point git at a git directory or a
 * common directory of its own, or add a per-worktree `core.fsmonitor`, and the next
 * `warren status` would run its program on the host. So before a call, what git would follow
 * is checked against what warren made (`pinWorktree`), and the call names the directories
 * itself with the keys that run a program set to what the main checkout would use (exec.ts).
 */

/**
 * Keys of a per-worktree configuration that run a program, or pull in more configuration: none
 * is taken from a workspace's `config.worktree` (the one git configuration its agent may write).
 */
const RUNS_A_PROGRAM =
  /^(core\.(fsmonitor|hookspath|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand)|diff\.external|(diff|merge|filter)\..+\.(textconv|command|driver|clean|smudge|process)|credential\..*|gpg\..*program|sequence\.editor|uploadpack\.packobjectshook|include\..*|includeif\..*|protocol\..*|.*\.helper)$/i;

/** Pure: the keys among `keys` that a workspace's own configuration may not set. */
export function programKeys(keys: readonly string[]): string[] {
  return keys.filter((k) => RUNS_A_PROGRAM.test(k));
}

function tampered(wsPath: string, what: string, fix: string): WarrenError {
  return new WarrenError(
    'WORKSPACE_TAMPERED',
    `${wsPath} does not point git where warren made it point: ${what}. warren ran no git there; nothing was changed.`,
    {
      hint: `Something in the workspace (its agent?) wrote that. Look at it, then ${fix}; or, if you do not trust what is there, remove the task from the main checkout with \`git worktree remove --force ${wsPath}\` and \`warren gc\`.`,
      details: { path: wsPath, problem: what },
    },
  );
}

function readTrimmed(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Checks what git would follow from workspace `wsPath` — its `.git` file, its git directory's
 * `commondir` and `gitdir`, and its `config.worktree` — against the repository's own, and
 * returns the pinned worktree; refuses (WORKSPACE_TAMPERED) on anything else.
 */
export async function pinWorktree(commonDir: string, hooksDir: string, wsPath: string): Promise<Worktree> {
  const dotGit = path.join(wsPath, '.git');
  const stat = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    throw tampered(
      wsPath,
      `${dotGit} is ${stat ? (stat.isSymbolicLink() ? 'a symlink' : 'not a file') : 'missing'}`,
      `make it the file git made`,
    );
  }
  const named = /^gitdir:\s*(.+)$/.exec(readTrimmed(dotGit) ?? '')?.[1]?.trim();
  const worktrees = path.join(real(commonDir), 'worktrees');
  const gitDir = named ? real(path.resolve(wsPath, named)) : '';
  if (!named || path.dirname(gitDir) !== worktrees) {
    throw tampered(
      wsPath,
      `${dotGit} names ${JSON.stringify(named ?? '')}, not a worktree of ${commonDir}`,
      `put back the line \`gitdir: ${worktrees}/<name>\``,
    );
  }
  const common = readTrimmed(path.join(gitDir, 'commondir'));
  if (common === null || real(path.resolve(gitDir, common)) !== real(commonDir)) {
    throw tampered(
      wsPath,
      `${path.join(gitDir, 'commondir')} names ${JSON.stringify(common ?? '')}, not ${commonDir}`,
      `write \`../..\` into it`,
    );
  }
  const back = readTrimmed(path.join(gitDir, 'gitdir'));
  if (back === null || real(path.dirname(path.resolve(gitDir, back))) !== real(wsPath)) {
    throw tampered(
      wsPath,
      `${path.join(gitDir, 'gitdir')} names ${JSON.stringify(back ?? '')}, not ${dotGit}`,
      `write \`${dotGit}\` into it`,
    );
  }
  const perWorktree = path.join(gitDir, 'config.worktree');
  const perStat = fs.lstatSync(perWorktree, { throwIfNoEntry: false });
  if (perStat && !perStat.isFile()) {
    throw tampered(wsPath, `${perWorktree} is ${perStat.isSymbolicLink() ? 'a symlink' : 'not a file'}`, 'remove it');
  }
  if (perStat) {
    // Reading a configuration file runs nothing.
    const listed = await git(['config', '--file', perWorktree, '--null', '--name-only', '--list'], {
      cwd: '/',
      allowFailure: true,
    });
    if (listed.exitCode !== 0) throw tampered(wsPath, `${perWorktree} is not a git configuration file`, 'empty it');
    const bad = programKeys(splitZ(listed.stdout));
    if (bad.length > 0) {
      throw tampered(
        wsPath,
        `${perWorktree} sets ${bad.join(', ')}, which run a program or read more configuration`,
        `remove ${bad.length === 1 ? 'it' : 'them'} (\`git config --file ${perWorktree} --unset KEY\`), or set ${bad.length === 1 ? 'it' : 'them'} in the repository's own configuration`,
      );
    }
  }
  return { path: wsPath, gitDir, commonDir, hooksDir };
}
