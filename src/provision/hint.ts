import fs from 'node:fs';
import { WORKTREEINCLUDE } from '../config/load.js';
import type { ProvisionMode } from '../config/schema.js';
import { checkIgnored } from '../git/status.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import type { Sources } from './modes/sources.js';

/**
 * The trap the README names, pointed out at `new`: git does not carry ignored paths into a
 * worktree, so a project whose main checkout has a `node_modules`, a venv, a `vendor/` or a
 * `.env` that warren is not told to provision gets a workspace without them, and its first
 * `npm test` fails with 127. `new` says so, with the `provision:` lines to add — once per
 * repository and path (below), not on every `new`.
 */

/** An ignored path the hint names, with the mode it suggests. */
export interface HintEntry {
  path: string;
  mode: ProvisionMode;
}

/**
 * Names at the repository's top that a project's own tooling reads, and the mode to suggest:
 * installed trees are cow (an isolated overlay of a shared snapshot, a copy where the machine
 * has none; a venv's absolute paths are rewritten either way), an env file is copied.
 */
export function trapMode(name: string): ProvisionMode | null {
  if (['node_modules', '.venv', 'venv', 'vendor'].includes(name)) return 'cow';
  // `.env`, `.env.local`, `.env.development.local`; warren's own `.env.warren` is the task's, never the checkout's.
  if (/^\.env(\.[A-Za-z0-9_-]+)*$/.test(name) && name !== '.env.warren') return 'copy';
  return null;
}

/**
 * Pure: the trap names among `names` (the main checkout's top level) that nothing provisions:
 * neither a path warren.yaml or `.worktreeinclude` brings (or skips with a reason of its own,
 * already said), nor one inside or around such a path.
 */
export function unprovisionedTraps(names: readonly string[], claimed: readonly string[]): HintEntry[] {
  const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  const out: HintEntry[] = [];
  for (const name of [...names].sort()) {
    const mode = trapMode(name);
    if (mode !== null && !claimed.some((c) => overlaps(c, name))) out.push({ path: name, mode });
  }
  return out;
}

/** The line to add under `provision:` in warren.yaml. Pure. */
export function provisionLine(entry: HintEntry): string {
  return `- { path: ${entry.path}, mode: ${entry.mode} }`;
}

/** The warning, in one line: what is missing, why it matters, the lines to add. Pure. */
export function hintMessage(entries: readonly HintEntry[]): string {
  const names = entries.map((e) => e.path);
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  const them = names.length === 1 ? 'it' : 'them';
  return `${listed} ${names.length === 1 ? 'is' : 'are'} in the main checkout, ignored by git, and not provisioned: this workspace does not have ${them}, so a command that needs ${them} fails here${names.includes('node_modules') ? ' (`npm test` exits 127 without node_modules)' : ''}. To bring ${them} into every workspace, add under \`provision:\` in warren.yaml ${entries.map((e) => `\`${provisionLine(e)}\``).join(' ')} (or list ${them} in ${WORKTREEINCLUDE}, copied). Said once for this repository.`;
}

/**
 * During `new`, after provisioning: the trap names that exist in the main checkout, are ignored
 * there and are provisioned by nothing, less those this repository was told about before. The
 * memory is the `provision.hint` event itself: events are never deleted, so it outlives every
 * task (and `rm` of all of them), belongs to the project, and shows in the dashboard and `show`
 * where it was said. Read and written in one transaction: two `new`s at once say it once.
 */
export async function hintUnprovisioned(ctx: ProjectContext, task: Task, sources: Sources): Promise<void> {
  const root = ctx.repo.root;
  const claimed = [...sources.items, ...sources.skips].map((i) => i.path);
  const names = fs.readdirSync(root).filter((n) => trapMode(n) !== null);
  const fresh = (entries: HintEntry[]): HintEntry[] => {
    const said = new Set(
      ctx.store
        .projectEvents(ctx.key, 'provision.hint')
        .flatMap((e) => (e.kind === 'provision.hint' ? e.data.paths.map((p) => p.path) : [])),
    );
    return entries.filter((e) => !said.has(e.path));
  };
  const candidates = fresh(unprovisionedTraps(names, claimed));
  if (candidates.length === 0) return;
  const ignored = await checkIgnored(
    root,
    candidates.map((c) => c.path),
  );
  const traps = candidates.filter((c) => ignored.has(c.path));
  if (traps.length === 0) return;
  ctx.store.db
    .transaction(() => {
      const unsaid = fresh(traps);
      if (unsaid.length === 0) return;
      ctx.store.addEvent({
        project: ctx.key,
        taskId: task.id,
        kind: 'provision.hint',
        level: 'warn',
        message: hintMessage(unsaid),
        data: { paths: unsaid, lines: unsaid.map(provisionLine) },
      });
    })
    .immediate();
}
