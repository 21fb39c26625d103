import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WORKTREEINCLUDE } from '../config/load.js';
import {
  changedCommands,
  changedSettings,
  commandsHash,
  describeCommand,
  removedCommands,
  repoCommands,
  securitySettings,
  trustedSet,
  type RepoCommand,
  type RepoCommandKind,
  type TrustedFiles,
} from '../config/trust.js';
import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';
import { POLICY_FILE } from './policy-file.js';

/**
 * Trust on first use. A repository's warren.yaml is its author's word: a freshly cloned one
 * could make `warren new` run anything. So warren runs a repository's commands (setup, verify,
 * teardown, its own agents) only once this user has seen them and trusted this exact set
 * (`warren trust`); the hash of the set is recorded per project under WARREN_HOME, and a
 * changed set — a pull, or a task that landed an edited warren.yaml — needs trust again.
 * The set is read from the main checkout's warren.yaml, the one the commands come from.
 *
 * The settings (config/trust.ts `securitySettings`, as config/trust-rule.ts classifies
 * warren.yaml's keys, with the run policy and `.worktreeinclude`) are in the set too: an agent
 * whose task lands `sandbox: none` must not get the next task run unsandboxed, nor one that lands
 * `provision: [{path: .env, mode: share}]` the user's secrets in the next task. They run nothing,
 * so a repository with no command needs no trust on first use — its first `warren new` pins its
 * settings (none set is pinned too) — but once pinned or trusted, a changed setting refuses
 * every new task, every command warren would run in a task (`warren exec` included) and every
 * land, until the user trusts it.
 */

export interface TrustState {
  /** sha256 of the set's canonical form. */
  hash: string;
  commands: RepoCommand[];
  /** True when the set is empty (nothing to trust) or this user trusted this exact set. */
  trusted: boolean;
  /** The commands new or changed since the set this user trusted before (all of them on first use). */
  changed: RepoCommand[];
  /** The commands of the set trusted before that this one no longer has. */
  removed: RepoCommand[];
  /** The security settings that differ from those trusted before, as `key: before → now`. */
  settingsChanged: string[];
  /** When this user last trusted a set for this repository (this one or an earlier one). */
  trustedAt: string | null;
}

export function trustState(ctx: ProjectContext): TrustState {
  const runnable = repoCommands(ctx.config);
  const commands = trustedSet(ctx.config, trustedFiles(ctx.repo.root));
  const hash = commandsHash(commands);
  const record = ctx.store.getTrust(ctx.key);
  const settingsChanged = record ? changedSettings(commands, record.commands) : [];
  // Nothing to run: trusted while the settings are those trusted before (or none were).
  const trusted = record?.hash === hash || (runnable.length === 0 && settingsChanged.length === 0);
  return {
    hash,
    commands,
    trusted,
    changed: trusted ? [] : changedCommands(commands, record?.commands),
    removed: trusted ? [] : removedCommands(commands, record?.commands),
    settingsChanged,
    trustedAt: record?.trustedAt ?? null,
  };
}

/** The files beside warren.yaml that the set counts, as the main checkout has them. */
export function trustedFiles(repoRoot: string): TrustedFiles {
  return { policySha256: policySha256(repoRoot), worktreeInclude: worktreeInclude(repoRoot) };
}

/** sha256 of the repository's signed run policy, or null when it has none. */
function policySha256(repoRoot: string): string | null {
  try {
    return createHash('sha256')
      .update(fs.readFileSync(path.join(repoRoot, POLICY_FILE)))
      .digest('hex');
  } catch {
    return null;
  }
}

/** `.worktreeinclude`'s text as provisioning reads it: a plain file only (a link is not read). */
function worktreeInclude(repoRoot: string): string | null {
  const file = path.join(repoRoot, WORKTREEINCLUDE);
  try {
    return fs.lstatSync(file).isFile() ? fs.readFileSync(file, 'utf8') : null;
  } catch {
    return null;
  }
}

/**
 * A repository with no command (so no trust record yet) has its settings pinned as they are
 * when its first task is made — none set is pinned too: from then on a change is noticed.
 * Returns whether it recorded.
 */
export function pinSettingsOnFirstUse(ctx: ProjectContext): boolean {
  if (ctx.store.getTrust(ctx.key) !== null || repoCommands(ctx.config).length > 0) return false;
  const settings = securitySettings(ctx.config, trustedFiles(ctx.repo.root));
  ctx.store.setTrust(ctx.key, commandsHash(settings), settings);
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'trust.recorded',
    message: `pinned warren.yaml's security settings on first use: ${settings.length > 0 ? settings.map(describeCommand).join('; ') : 'none set'}; a change to them needs \`warren trust\``,
    data: { hash: commandsHash(settings), commands: settings.map(describeCommand) },
  });
  return true;
}

/**
 * Refuses (UNTRUSTED_COMMANDS) while warren.yaml's security settings differ from the ones this
 * user trusted (or warren pinned): before any command runs in a task, and before a land. Unlike
 * assertTrusted, a repository whose commands were never trusted passes (its settings were never
 * pinned; `warren exec` runs the user's own command).
 */
export function assertSettingsTrusted(ctx: ProjectContext, what: string): void {
  const state = trustState(ctx);
  if (state.trusted || state.settingsChanged.length === 0) return;
  throw new WarrenError(
    'UNTRUSTED_COMMANDS',
    `this repository's warren.yaml changed its security settings since you trusted them (${state.settingsChanged.join('; ')}). ${what}`,
    {
      hint: 'Review the change with `warren trust` (a task that landed it was flagged then: `warren show ID`), and trust it, or put the settings back.',
      details: { hash: state.hash, settingsChanged: state.settingsChanged },
    },
  );
}

/**
 * Records this user's trust in the set as it is now. `expectedHash`, when given, must be the
 * hash the user reviewed: a set that changed in between is refused, not trusted unseen.
 */
export function trustCommands(ctx: ProjectContext, expectedHash?: string): TrustState {
  const state = trustState(ctx);
  if (expectedHash !== undefined && expectedHash !== state.hash) {
    throw new WarrenError(
      'UNTRUSTED_COMMANDS',
      `this repository's command set has hash ${state.hash}, not ${expectedHash}: it changed since it was shown. Nothing was recorded.`,
      {
        hint: 'Run `warren trust` again to see the commands as they are now.',
        details: { hash: state.hash, commands: state.commands },
      },
    );
  }
  if (state.trusted) return state;
  ctx.store.setTrust(ctx.key, state.hash, state.commands);
  ctx.store.addEvent({
    project: ctx.key,
    kind: 'trust.recorded',
    message: `trusted ${state.commands.length} repository command(s) (${state.hash.slice(0, 12)})`,
    data: { hash: state.hash, commands: state.commands.map(describeCommand) },
  });
  return {
    ...state,
    trusted: true,
    changed: [],
    removed: [],
    settingsChanged: [],
    trustedAt: new Date().toISOString(),
  };
}

/**
 * Refuses (UNTRUSTED_COMMANDS, exit 1) before a repository command of these kinds runs while
 * the set is not trusted; names the ones that would have run. `what` says what was not done.
 */
export function assertTrusted(
  ctx: ProjectContext,
  kinds: readonly RepoCommandKind[],
  what: string,
  ids?: readonly string[],
): void {
  const state = trustState(ctx);
  if (state.trusted) return;
  const wouldRun = state.commands.filter((c) => kinds.includes(c.kind) && (ids === undefined || ids.includes(c.id)));
  throw untrusted(state, wouldRun, what);
}

function untrusted(state: TrustState, wouldRun: readonly RepoCommand[], what: string): WarrenError {
  const listed = (wouldRun.length > 0 ? wouldRun : state.commands).map(describeCommand);
  const why =
    state.trustedAt === null
      ? 'you have not trusted them yet'
      : state.settingsChanged.length > 0
        ? `its security settings changed since you trusted them (${state.settingsChanged.join('; ')})`
        : `they changed since you trusted them (${changeSummary(state)})`;
  return new WarrenError(
    'UNTRUSTED_COMMANDS',
    `this repository's warren.yaml asks warren to run commands, and ${why}: ${listed.join('; ')}. ${what}`,
    {
      hint: 'Review them with `warren trust`, which shows the whole set and records your trust.',
      details: { hash: state.hash, commands: wouldRun, changed: state.changed, removed: state.removed },
    },
  );
}

/** `1 new or changed; removed: setup old: npm ci`: what differs from the set trusted before, removals named. */
export function changeSummary(state: Pick<TrustState, 'changed' | 'removed'>): string {
  const parts: string[] = [];
  if (state.changed.length > 0) parts.push(`${state.changed.length} new or changed`);
  if (state.removed.length > 0) parts.push(`removed: ${state.removed.map(describeCommand).join('; ')}`);
  return parts.length > 0 ? parts.join('; ') : 'the set differs';
}
