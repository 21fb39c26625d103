import {
  changedCommands,
  commandsHash,
  describeCommand,
  repoCommands,
  type RepoCommand,
  type RepoCommandKind,
} from '../config/trust.js';
import { WarrenError } from '../errors.js';
import type { ProjectContext } from '../workspace/context.js';

/**
 * Trust on first use. A repository's warren.yaml is its author's word: a freshly cloned one
 * could make `warren new` run anything. So warren runs a repository's commands (setup, verify,
 * teardown, its own agents) only once this user has seen them and trusted this exact set
 * (`warren trust`); the hash of the set is recorded per project under WARREN_HOME, and a
 * changed set — a pull, or a task that landed an edited warren.yaml — needs trust again.
 * The set is read from the main checkout's warren.yaml, the one the commands come from.
 */

export interface TrustState {
  /** sha256 of the set's canonical form. */
  hash: string;
  commands: RepoCommand[];
  /** True when the set is empty (nothing to trust) or this user trusted this exact set. */
  trusted: boolean;
  /** The commands new or changed since the set this user trusted before (all of them on first use). */
  changed: RepoCommand[];
  /** When this user last trusted a set for this repository (this one or an earlier one). */
  trustedAt: string | null;
}

export function trustState(ctx: ProjectContext): TrustState {
  const commands = repoCommands(ctx.config);
  const hash = commandsHash(commands);
  const record = ctx.store.getTrust(ctx.key);
  const trusted = commands.length === 0 || record?.hash === hash;
  return {
    hash,
    commands,
    trusted,
    changed: trusted ? [] : changedCommands(commands, record?.commands),
    trustedAt: record?.trustedAt ?? null,
  };
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
  return { ...state, trusted: true, changed: [], trustedAt: new Date().toISOString() };
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
      : `they changed since you trusted them (${state.changed.length} new or changed)`;
  return new WarrenError(
    'UNTRUSTED_COMMANDS',
    `this repository's warren.yaml asks warren to run commands, and ${why}: ${listed.join('; ')}. ${what}`,
    {
      hint: 'Review them with `warren trust`, which shows the whole set and records your trust.',
      details: { hash: state.hash, commands: wouldRun, changed: state.changed },
    },
  );
}
