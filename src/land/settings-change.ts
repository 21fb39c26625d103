import { createHash } from 'node:crypto';
import { CONFIG_FILE, parseConfig } from '../config/load.js';
import { changedSettings, securitySettings, type RepoCommand } from '../config/trust.js';
import { fileAt } from '../git/trees.js';
import type { Repository } from '../git/repo.js';
import { POLICY_FILE } from '../run/policy-file.js';

/**
 * What a land would change in warren.yaml's security settings (config/trust.ts): the sandbox,
 * network, protected paths, gate or run policy as committed on the base, against the squash.
 * A task's agent can edit them like any file; the land goes ahead, flagged, and once it has
 * landed nothing runs in a task until the user trusts the new settings (run/trust.ts).
 */
export async function settingsChange(
  repo: Repository,
  touched: readonly string[],
  baseTip: string,
  commit: string,
): Promise<string[]> {
  if (!touched.includes(CONFIG_FILE) && !touched.includes(POLICY_FILE)) return [];
  const [before, after] = await Promise.all([settingsAt(repo, baseTip), settingsAt(repo, commit)]);
  if (typeof after === 'string') return [after];
  if (typeof before === 'string') return [];
  return changedSettings(after, before);
}

/** The settings committed at `rev`, or why they cannot be read. */
async function settingsAt(repo: Repository, rev: string): Promise<RepoCommand[] | string> {
  const [yaml, policy] = await Promise.all([fileAt(repo, rev, CONFIG_FILE), fileAt(repo, rev, POLICY_FILE)]);
  try {
    const config = await parseConfig(yaml ?? '', `${CONFIG_FILE} at ${rev.slice(0, 12)}`);
    const sha = policy === null ? null : createHash('sha256').update(policy).digest('hex');
    return securitySettings(config, sha);
  } catch (err) {
    return `${CONFIG_FILE} at ${rev.slice(0, 12)} is not valid (${err instanceof Error ? err.message : String(err)})`;
  }
}
