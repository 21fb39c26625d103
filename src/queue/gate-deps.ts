import fs from 'node:fs';
import path from 'node:path';
import type { WarrenConfig } from '../config/schema.js';
import { overlaySupport } from '../provision/cow-support.js';
import { budgetOf } from '../provision/modes/budget.js';
import { resolveSources } from '../provision/modes/sources.js';
import { provisionPaths } from '../provision/provision.js';
import { installedFacts, isNodeModules } from '../provision/snapshots/installed.js';
import {
  ensureSnapshot,
  lockfileFor,
  readSnapshotMeta,
  snapshotKey,
  snapshotsDir,
} from '../provision/snapshots/snapshot.js';
import type { LockfileRef, ProvisionItem, ProvisionRecord } from '../provision/types.js';
import { runSteps, type StepsOutcome } from '../run/commands.js';
import type { Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { modeKind } from '../provision/modes/kinds.js';

/**
 * The gate's dependencies are the integrated tree's (issue 30): each provisioned `node_modules`
 * is keyed by the integrated commit's own lockfile, not the main checkout's. A snapshot with
 * that key is mounted; where there is none, the install the setup names runs in the
 * integration workspace (bounded, logged and sandboxed like any setup step), and what it
 * installed becomes the snapshot for that key, kept for the next gate and for the tasks made
 * once it lands. An install that fails is a gate failure: a base that can no longer install
 * never lands.
 */

type SetupStep = WarrenConfig['setup'][number];

/** How the gate got one dependency folder. */
export interface GateSnapshot {
  path: string;
  /** The snapshot key (null: a path without a lockfile, provisioned as for a task). */
  key: string | null;
  lockfile: string | null;
  /** `main`: the main checkout's lockfile is the integrated one; `reused`: a snapshot had its key; `installed`: built by the gate now; `unmatched`: no install step, the main checkout's. */
  how: 'main' | 'reused' | 'installed' | 'unmatched';
}

export interface GateProvision {
  records: ProvisionRecord[];
  /** The integration workspace as provisioned, with what `prepare` added (its services). */
  task: Task;
  snapshots: GateSnapshot[];
  /** The setup steps run in the gate (the install, `gate: true` steps); null when none ran. */
  setup: StepsOutcome | null;
}

/** Package-manager commands that install a lockfile's tree: a setup step that runs one is the install. */
const INSTALL = /^\s*(?:npm\s+(?:ci|install|i)|pnpm\s+(?:install|i)|yarn(?:\s+install)?|bun\s+install)(?:\s|$)/;

/** Is `step` the install (`gate: install`, or by default a package manager's install)? Pure. */
export function isInstallStep(step: SetupStep): boolean {
  if (step.gate !== undefined) return step.gate === 'install';
  return INSTALL.test(typeof step.run === 'string' ? step.run : step.run.join(' '));
}

/** The setup steps the gate runs: the install when `install` is true, and every `gate: true` one, in setup's order. Pure. */
export function gateSetupSteps(setup: readonly SetupStep[], install: boolean): SetupStep[] {
  return setup.filter((s) => s.gate === true || (install && isInstallStep(s)));
}

/**
 * Provisions the integration workspace `task` (at the integrated commit), lets `prepare` add to
 * it (the gate's services: its setup steps see them, as a task's setup does at `new`), and runs
 * the gate's setup steps.
 */
export async function provisionGate(
  ctx: ProjectContext,
  task: Task,
  provisioned: (records: ProvisionRecord[]) => void,
  prepare: (provisioned: Task) => Promise<Task>,
  trustedBy?: 'coordinator',
): Promise<GateProvision> {
  const sources = await resolveSources(ctx);
  const cow = (await overlaySupport(ctx.store.home)).ok;
  const snapshots: GateSnapshot[] = [];
  const follow: ProvisionItem[] = [];
  const install: { item: ProvisionItem; lockfile: LockfileRef; key: string }[] = [];
  // A node_modules the main checkout has not installed is still one the gate needs.
  const missing = sources.skips.filter((s) => s.reason === 'missing' && s.mode !== undefined && isNodeModules(s.path));
  const candidates: ProvisionItem[] = [
    ...sources.items,
    ...missing.map((s) => ({ path: s.path, mode: s.mode ?? 'cow', from: 'warren.yaml' as const })),
  ];
  for (const item of candidates) {
    const integrated = isNodeModules(item.path) ? lockfileFor(task.path, item.path) : null;
    const inMain = sources.items.includes(item);
    if (integrated === null) {
      if (inMain) follow.push(item);
      continue;
    }
    const key = snapshotKey(item.path, '', integrated);
    const main = inMain ? lockfileFor(ctx.repo.root, item.path) : null;
    if (main !== null && main.path === integrated.path && main.sha256 === integrated.sha256) {
      follow.push(item);
      snapshots.push({ path: item.path, key, lockfile: integrated.path, how: 'main' });
    } else if (
      modeKind(item.mode).layered &&
      cow &&
      inMain &&
      readSnapshotMeta(path.join(snapshotsDir(ctx.store.home), key))
    ) {
      follow.push(item);
      snapshots.push({ path: item.path, key, lockfile: integrated.path, how: 'reused' });
    } else install.push({ item, lockfile: integrated, key });
  }
  const steps = gateSetupSteps(ctx.config.setup, install.length > 0);
  const canInstall = steps.some(isInstallStep);
  if (install.length > 0 && !canInstall) {
    // Nothing to install with: the main checkout's folders, as before, and said.
    for (const i of install) {
      if (sources.items.includes(i.item)) follow.push(i.item);
      snapshots.push({ path: i.item.path, key: null, lockfile: i.lockfile.path, how: 'unmatched' });
    }
    const paths = foldersOf(install.map((i) => i.item.path));
    const message = `the merge queue's gate: the integrated tree's ${lockfilesOf(install)} has no dependency snapshot and setup names no install (a step running npm ci, pnpm install, yarn install…, or one marked gate: install), so the gate runs with the main checkout's ${paths}, which may not be what lands`;
    ctx.store.addEvent({ project: ctx.key, kind: 'queue.gate_deps', level: 'warn', message, data: { paths } });
    ctx.reporter.line(`warren: warn: ${message}`);
    install.length = 0;
  }
  const { records } = await provisionPaths(
    ctx,
    task,
    { items: follow, skips: sources.skips.filter((s) => !missing.includes(s)) },
    { lockfileRoot: task.path },
  );
  provisioned(records);
  // A task's record names the snapshot it mounted: the key of what the gate ran with.
  for (const s of snapshots) {
    const r = records.find((rec) => rec.path === s.path);
    // Not mounted from a snapshot (a copy where overlay cannot be mounted): none to name.
    if (s.how === 'main' && r) s.key = r.snapshot ?? null;
  }
  for (const r of records) {
    if (r.snapshot && !snapshots.some((s) => s.path === r.path))
      snapshots.push({ path: r.path, key: r.snapshot, lockfile: r.lockfile?.path ?? null, how: 'main' });
  }
  const prepared = await prepare({ ...task, data: { ...task.data, provision: records } });
  if (steps.length === 0) return { records, task: prepared, snapshots, setup: null };
  if (install.length > 0)
    ctx.reporter.line(
      `warren: merge queue: no dependency snapshot matches the integrated ${lockfilesOf(install)} (${foldersOf(install.map((i) => i.item.path))}); installing in the integration workspace…`,
    );
  const setup = await runSteps(ctx, prepared, 'setup', steps, {
    stopOnFailure: true,
    output: { stdout: null, stderr: null },
    ...(trustedBy ? { trustedBy } : {}),
  });
  if (!setup.ok) return { records, task: prepared, snapshots, setup };
  // Deepest first: a pnpm package's folder links into the root's, which must still be in place when it is taken.
  const promote = gateSnapshotMode() === 'promote' && cow;
  const remount: ProvisionItem[] = [];
  for (const i of [...install].sort((a, b) => b.item.path.length - a.item.path.length)) {
    const movable = promote && i.item.mode === 'cow' && sources.items.includes(i.item);
    snapshots.push(await keepInstall(ctx, task, i, movable));
    if (movable && !fs.existsSync(path.join(task.path, i.item.path))) remount.push(i.item);
  }
  if (remount.length === 0) return { records, task: prepared, snapshots, setup };
  // The install became the snapshot by a rename: the gate runs on it mounted copy-on-write, as a task would.
  const again = await provisionPaths(ctx, task, { items: remount, skips: [] }, { lockfileRoot: task.path });
  const all = [...records, ...again.records];
  provisioned(all);
  return { records: all, task: { ...prepared, data: { ...prepared.data, provision: all } }, snapshots, setup };
}

/**
 * How a passing install becomes the snapshot: `promote` (the default) renames the gate's own
 * install into place and mounts it back copy-on-write, without a copy; `copy`
 * (WARREN_GATE_SNAPSHOT=copy, kept for bench/gate-snapshot.js to measure against) copies it.
 */
function gateSnapshotMode(): 'promote' | 'copy' {
  return process.env.WARREN_GATE_SNAPSHOT === 'copy' ? 'copy' : 'promote';
}

/** The gate's fresh install of `item`, taken as the snapshot for its lockfile when it matches it. */
async function keepInstall(
  ctx: ProjectContext,
  task: Task,
  i: { item: ProvisionItem; lockfile: LockfileRef; key: string },
  move: boolean,
): Promise<GateSnapshot> {
  const facts = await installedFacts(task.path, i.item.path);
  const said = { path: i.item.path, lockfile: i.lockfile.path };
  if (facts.state !== 'matches') {
    const message = `the merge queue's gate installed ${i.item.path} but it does not match ${i.lockfile.path} (${facts.why ?? facts.state}); no snapshot was kept of it`;
    ctx.store.addEvent({
      project: ctx.key,
      kind: 'queue.gate_deps',
      level: 'warn',
      message,
      data: { paths: i.item.path },
    });
    return { ...said, key: null, how: 'installed' };
  }
  const taken = await ensureSnapshot(
    ctx.store.home,
    i.key,
    { path: i.item.path, source: path.join(ctx.repo.root, i.item.path), lockfile: i.lockfile, builtBy: 'gate' },
    (line) => ctx.reporter.line(line),
    { repoRoot: task.path, budget: budgetOf(ctx.config) },
    { verify: () => Promise.resolve(facts), from: path.join(task.path, i.item.path), move },
  );
  if (taken && !('refused' in taken)) {
    taken.lock.release();
    if (taken.created)
      ctx.store.addEvent({
        project: ctx.key,
        kind: 'provision.snapshot',
        level: 'info',
        message: `the merge queue's gate installed ${i.item.path} from the integrated ${i.lockfile.path} and kept it as snapshot ${i.key.slice(0, 12)} (${taken.meta.entries} entries, ${fs.existsSync(path.join(task.path, i.item.path)) ? 'copied' : 'moved into place: no copy'}), for the next gate and the tasks made once it lands`,
        data: {
          path: i.item.path,
          snapshot: i.key,
          entries: taken.meta.entries,
          bytes: taken.meta.bytes,
          ms: taken.meta.ms,
        },
      });
  }
  return { ...said, key: i.key, how: 'installed' };
}

/** The lockfiles of `install`, each once (a pnpm workspace's 17 folders share one). Pure. */
export function lockfilesOf(install: readonly { lockfile: { path: string } }[]): string {
  return [...new Set(install.map((i) => i.lockfile.path))].join(', ');
}

/** `node_modules`, or `node_modules and 16 more folders`: a list of folders, summarised past three. Pure. */
export function foldersOf(paths: readonly string[]): string {
  return paths.length <= 3 ? paths.join(', ') : `${paths[0]} and ${paths.length - 1} more folders`;
}

/**
 * `node_modules: snapshot 1a2b3c4d5e6f (installed from the integrated pnpm-lock.yaml)` for
 * people, one line per kind of answer: a pnpm workspace's 17 folders of one lockfile are one
 * (`node_modules and 16 more folders: 17 snapshots (…)`). Empty when the gate had no
 * dependency folder. Pure.
 */
export function describeSnapshots(snapshots: readonly GateSnapshot[]): string {
  const how = {
    main: "the main checkout's",
    reused: 'reused for the integrated',
    installed: 'installed from the integrated',
    unmatched: "the main checkout's, not the integrated",
  } as const;
  const groups = new Map<string, GateSnapshot[]>();
  for (const s of snapshots) {
    const key = `${s.how}\0${s.lockfile ?? ''}\0${s.key === null}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()]
    .map((group) => {
      const [s] = group as [GateSnapshot, ...GateSnapshot[]];
      const what =
        group.length === 1
          ? s.key
            ? `snapshot ${s.key.slice(0, 12)}`
            : 'no snapshot'
          : s.key
            ? `${group.length} snapshots`
            : 'no snapshots';
      return `${foldersOf(group.map((g) => g.path))}: ${what} (${how[s.how]} ${s.lockfile ?? 'lockfile'})`;
    })
    .join(', ');
}
