import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic.js';
import type { WarrenConfig } from './schema.js';
import type { UserConfig } from './user-schema.js';

export const CONFIG_FILE = 'warren.yaml';
/** Ignored paths to copy into every workspace, as git's patterns (provision/modes/include.ts); counted in the trusted set. */
export const WORKTREEINCLUDE = '.worktreeinclude';
/** The user's own settings, under WARREN_HOME: what a repository may not decide (docs/configuration.md). */
export const USER_CONFIG_FILE = 'config.yaml';

/** What an absent warren.yaml means; a test checks it equals the schema's defaults. */
export const DEFAULT_CONFIG: WarrenConfig = {
  provision: [],
  setup: [],
  verify: [],
  teardown: [],
  protected: [],
  sandbox: 'none',
  runner: 'local',
  checkout: 'git',
};

/** Bump when the schema or its defaults change, so cached results of the old one are not used. */
const SCHEMA_VERSION = '4';

/**
 * Reads `warren.yaml` from the repository root; a missing file is the default configuration.
 * Validation (yaml + zod) costs more start-up time than a whole `git worktree add`, so a
 * validated result is cached under `cacheDir` by the hash of the file's exact text: the same
 * bytes always validate the same way, and invalid text is never cached.
 */
export async function loadConfig(repoRoot: string, cacheDir?: string): Promise<WarrenConfig> {
  const file = path.join(repoRoot, CONFIG_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(DEFAULT_CONFIG);
    throw err;
  }
  const cached = cacheDir
    ? path.join(cacheDir, `${createHash('sha256').update(`${SCHEMA_VERSION}\0${text}`).digest('hex')}.json`)
    : null;
  if (cached) {
    try {
      return JSON.parse(fs.readFileSync(cached, 'utf8')) as WarrenConfig;
    } catch {
      // not cached yet, or unreadable: validate
    }
  }
  const config = await parseConfig(text, file);
  if (cached) writeFileAtomic(cached, JSON.stringify(config));
  return config;
}

/** Validates warren.yaml text (e.g. as committed on a branch); throws CONFIG_INVALID naming the key. */
export async function parseConfig(text: string, file = CONFIG_FILE): Promise<WarrenConfig> {
  const { parseConfig: validate } = await import('./validate.js');
  return validate(text, file);
}

/**
 * `$WARREN_HOME/config.yaml` (missing: no settings), validated and cached like warren.yaml.
 * Only the user writes it, so what it says is the user's word.
 */
export async function loadUserConfig(home: string, cacheDir?: string): Promise<UserConfig> {
  const file = path.join(home, USER_CONFIG_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const cached = cacheDir
    ? path.join(cacheDir, `${createHash('sha256').update(`user-${SCHEMA_VERSION}\0${text}`).digest('hex')}.json`)
    : null;
  if (cached) {
    try {
      return JSON.parse(fs.readFileSync(cached, 'utf8')) as UserConfig;
    } catch {
      // not cached yet, or unreadable: validate
    }
  }
  const { parseUserConfig } = await import('./validate.js');
  const config = parseUserConfig(text, file);
  if (cached) writeFileAtomic(cached, JSON.stringify(config));
  return config;
}
