import { addExcludeLine } from '../git/info-exclude.js';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_CONFIG, loadConfig, loadUserConfig, USER_CONFIG_FILE } from '../config/load.js';
import type { WarrenConfig } from '../config/schema.js';
import type { UserConfig } from '../config/user-schema.js';
import { isWarrenError, WarrenError } from '../errors.js';
import { resolveRepository } from '../git/repo.js';
import { tracksAnything } from '../git/status.js';
import type { Store } from '../state/store.js';
import type { Lifecycle, ProjectContext } from './types.js';
import { isInside, projectKey } from './paths.js';
import { resolveWorktreeRoot, WORKTREE_ROOT_ENV } from './root.js';
import { SILENT, type Reporter } from './reporter.js';

export type { ProjectContext } from './types.js';

export interface OpenParts {
  lifecycle: Lifecycle;
  /**
   * The state, or a function that opens it: it is then opened while git looks for the
   * repository (the two are independent, and together they are most of a command's start-up).
   */
  store: Store | (() => Store);
  reporter?: Reporter;
  /**
   * Open even when warren.yaml is invalid, with the defaults in its place: for commands that need
   * nothing from it (list, show, scan, gc), so that bad configuration blocks only what uses it.
   */
  lenientConfig?: boolean;
}

/** Opens a repository with the lifecycle it is given (the library's `openProject` gives warren's own). */
export async function openProjectWith(dir: string, parts: OpenParts): Promise<ProjectContext> {
  const finding = resolveRepository(dir);
  finding.catch(() => undefined); // awaited below; a failure must not go unhandled while the store opens
  const store = typeof parts.store === 'function' ? parts.store() : parts.store;
  const repo = await finding;
  const cache = path.join(store.home, 'cache', 'config');
  const [{ config, problem }, userOrError] = await Promise.all([
    readConfig(repo.root, cache, parts.lenientConfig === true),
    loadUserConfig(store.home, cache).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
  ]);
  const key = projectKey(repo.root, repo.commonDir);
  // Decided before anything is recorded: a root the repository may not choose touches nothing.
  const root = resolveWorktreeRoot({
    repoRoot: repo.root,
    commonDir: repo.commonDir,
    home: store.home,
    key,
    fromRepository: config.worktree_root,
    // WARREN_WORKTREE_ROOT is read first: its own error is the one to say.
    fromUser: userRootChoice(store.home, userOrError),
  });
  if (userOrError instanceof Error) throw userOrError;
  const user = userOrError;
  store.upsertProject(key, repo.root, repo.commonDir);
  return {
    repo,
    key,
    config,
    root,
    store,
    user,
    lifecycle: parts.lifecycle,
    reporter: parts.reporter ?? SILENT,
    ...(problem ? { configProblem: problem } : {}),
  };
}

async function readConfig(
  repoRoot: string,
  cacheDir: string,
  lenient: boolean,
): Promise<{ config: WarrenConfig; problem?: WarrenError }> {
  try {
    return { config: await loadConfig(repoRoot, cacheDir) };
  } catch (err) {
    if (!lenient || !isWarrenError(err, 'CONFIG_INVALID')) throw err;
    return { config: structuredClone(DEFAULT_CONFIG), problem: err };
  }
}

/** The user's workspace root: the environment over `$WARREN_HOME/config.yaml`; null when neither sets one. */
function userRootChoice(home: string, user: UserConfig | Error): { value: string; source: string } | null {
  const fromEnv = process.env[WORKTREE_ROOT_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: WORKTREE_ROOT_ENV };
  if (user instanceof Error) throw user;
  return user.worktree_root === undefined
    ? null
    : { value: user.worktree_root, source: path.join(home, USER_CONFIG_FILE) };
}

/**
 * Makes the root exist as a real directory. A root inside the repository is kept out of git
 * through `.git/info/exclude`, never by editing the user's `.gitignore` — so it must not hold
 * tracked files: excluding `/src/` would hide the user's new files there from `git status`.
 */
export async function ensureRoot(ctx: ProjectContext): Promise<void> {
  const inRepository = isInside(ctx.repo.root, ctx.root);
  const rel = path.relative(ctx.repo.root, ctx.root).split(path.sep).join('/');
  if (inRepository && (await tracksAnything(ctx.repo.root, rel))) {
    throw new WarrenError(
      'CONFIG_INVALID',
      `warren.yaml: worktree_root ${JSON.stringify(rel)} holds files git tracks; warren keeps its root out of git, which would hide new files there. Nothing was created.`,
      {
        hint: 'Choose a folder of its own (e.g. .worktrees), or leave worktree_root unset.',
        details: { key: 'worktree_root', value: rel },
      },
    );
  }
  let stat: fs.Stats | null = null;
  try {
    stat = fs.lstatSync(ctx.root);
  } catch {
    stat = null;
  }
  if (stat === null) {
    fs.mkdirSync(ctx.root, { recursive: true });
  } else if (stat.isSymbolicLink() || !stat.isDirectory()) {
    throw new WarrenError(
      'PATH_ESCAPE',
      `the workspace root ${ctx.root} is a symlink or not a directory; warren refuses to follow it. Nothing was created.`,
      {
        hint: 'Replace it with a real directory, or choose another root (`warren help configuration`).',
      },
    );
  }
  if (inRepository) {
    addExcludeLine(ctx.repo.commonDir, `/${rel}/`, 'warren workspaces');
  }
}
