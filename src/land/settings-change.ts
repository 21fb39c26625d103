import { createHash } from 'node:crypto';
import { CONFIG_FILE, parseConfig, WORKTREEINCLUDE } from '../config/load.js';
import { changedSettings, securitySettings, type RepoCommand } from '../config/trust.js';
import { fileAt, treeEntry } from '../git/trees.js';
import type { Repository } from '../git/repo.js';
import { POLICY_FILE } from '../trust/policy-file.js';

/**
 * What a land would change in the settings of the trusted set (config/trust.ts): warren.yaml's
 * counted keys (the sandbox, network, protected paths, gate, provisioning, archive…), the run
 * policy and `.worktreeinclude`, as committed on the base, against the squash. A task's agent
 * can edit them like any file; the land goes ahead, flagged, and once it has landed nothing
 * runs in a task until the user trusts the new settings (trust/trust.ts).
 */
export async function settingsChange(
  repo: Repository,
  touched: readonly string[],
  baseTip: string,
  commit: string,
): Promise<string[]> {
  if (![CONFIG_FILE, POLICY_FILE, WORKTREEINCLUDE].some((f) => touched.includes(f))) return [];
  const [before, after] = await Promise.all([settingsAt(repo, baseTip), settingsAt(repo, commit)]);
  if (typeof after === 'string') return [after];
  if (typeof before === 'string') return [];
  return changedSettings(after, before);
}

/** The settings committed at `rev`, or why they cannot be read. */
async function settingsAt(repo: Repository, rev: string): Promise<RepoCommand[] | string> {
  const [yaml, policy, include] = await Promise.all([
    fileAt(repo, rev, CONFIG_FILE),
    fileAt(repo, rev, POLICY_FILE),
    plainFileAt(repo, rev, WORKTREEINCLUDE),
  ]);
  try {
    const config = await parseConfig(yaml ?? '', `${CONFIG_FILE} at ${rev.slice(0, 12)}`);
    const sha = policy === null ? null : createHash('sha256').update(policy).digest('hex');
    return securitySettings(config, { policySha256: sha, worktreeInclude: include });
  } catch (err) {
    return `${CONFIG_FILE} at ${rev.slice(0, 12)} is not valid (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** A file's text at `rev` when it is a plain file there, as provisioning reads it (a link is not read). */
async function plainFileAt(repo: Repository, rev: string, file: string): Promise<string | null> {
  const entry = await treeEntry(repo, rev, file);
  return entry && (entry.mode === '100644' || entry.mode === '100755') ? fileAt(repo, rev, file) : null;
}
