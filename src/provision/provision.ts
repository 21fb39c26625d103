import fs from 'node:fs';
import path from 'node:path';
import { WarrenError, isWarrenError } from '../errors.js';
import type { NewEvent, Task } from '../state/types.js';
import type { ProjectContext } from '../workspace/context.js';
import { isStrictlyInside } from '../workspace/paths.js';
import { budgetOf, formatBytes } from './budget.js';
import { keepOutOfStatus } from './exclude.js';
import { releaseRecords } from './lifecycle.js';
import { provisionCopy, provisionCow, provisionHardlink, provisionShare, type ModeEnv, type ModeOutcome } from './modes.js';
import { resolveSources, type Sources } from './sources.js';
import type { ProvisionItem, ProvisionRecord, ProvisionSkip } from './types.js';
import { overlaySupport } from './overlay.js';
import { lexists } from '../util/lexists.js';

export interface ProvisionResult {
  records: ProvisionRecord[];
  skips: ProvisionSkip[];
}

/**
 * Brings the ignored paths named by `.worktreeinclude` and `warren.yaml` into a workspace.
 * gather (sources, checks) → act per path → record (events, task.data.provision). A failure
 * undoes this call's mounts and links before it is rethrown, so creation can roll back.
 */
export async function provisionPaths(ctx: ProjectContext, task: Task, sources?: Sources): Promise<ProvisionResult> {
  const progress = (line: string): void => ctx.reporter.line(line);
  const { items, skips } = sources ?? (await resolveSources(ctx));
  const records: ProvisionRecord[] = [];
  const event: ModeEnv['event'] = (kind, level, message, data) => ctx.store.addEvent({ project: ctx.key, taskId: task.id, kind, level, message, data } as NewEvent);
  const env: ModeEnv = { ctx, task, budget: { limit: budgetOf(ctx.config), used: { entries: 0, bytes: 0 } }, progress, event };
  try {
    for (const item of items) {
      const dst = destinationFor(task, item);
      if (dst === null) {
        skips.push({ path: item.path, mode: item.mode, reason: 'unsafe', detail: `${item.path} would resolve outside the workspace (a tracked symlink in its parent?)` });
        continue;
      }
      if (lexists(dst)) {
        skips.push({ path: item.path, mode: item.mode, reason: 'exists', detail: `${item.path} already exists in the workspace; warren leaves it as it is` });
        continue;
      }
      const outcome = await runMode(env, item, dst);
      if ('skip' in outcome) {
        skips.push({ path: item.path, mode: item.mode, reason: outcome.skip, detail: outcome.detail });
        continue;
      }
      records.push(outcome.record);
      // Recorded at once: a crash later in `new` leaves a record that rm, gc and scan can act on (unmount first).
      ctx.store.mergeData(ctx.key, task.id, { provision: records });
      const r = outcome.record;
      event('provision.path', 'info', `${r.path}: ${r.mode}${r.mode !== r.requested ? ` (asked: ${r.requested})` : ''} by ${r.method}, ${r.entries} entries, ${formatBytes(r.bytes)}, ${r.ms} ms${r.filled ? `, ${r.filled} file(s) copied where linking was refused` : ''}`, { ...r });
    }
    const excluded = await keepOutOfStatus(ctx, task.path, records.map((r) => r.path));
    if (excluded.length > 0) {
      event('provision.excluded', 'info', `added ${excluded.join(', ')} to the repository's info/exclude so git status in workspaces does not list warren's own paths`, { paths: excluded });
    }
  } catch (err) {
    await releaseRecords(ctx, task, records, { removeFiles: true });
    ctx.store.mergeData(ctx.key, task.id, { provision: [] });
    if (isWarrenError(err)) throw err;
    throw new WarrenError('PROVISION_FAILED', `provisioning ${task.id} failed: ${err instanceof Error ? err.message : String(err)}; what it had made was undone`, { cause: err });
  }
  for (const skip of skips) {
    event('provision.skip', 'warn', `skipped ${skip.path} (${skip.reason}): ${skip.detail}`, { ...skip });
  }
  const namespaced = records.filter((r) => r.namespaced).map((r) => r.path);
  if (namespaced.length > 0) {
    const message = `${namespaced.join(', ')}: a copy-on-write layer in a user namespace (not root), visible only to commands run through warren (exec, run, setup, verify); tools outside warren (an editor, a shell) see an empty folder. \`warren exec ${task.id} -- $SHELL\` opens a shell that sees it.${await whyNotFuse(ctx)}`;
    event('provision.namespaced', 'info', message, { paths: namespaced });
    progress(`warren: ${message}`);
  }
  ctx.store.mergeData(ctx.key, task.id, { provision: records, provisionSkips: skips });
  return { records, skips };
}

/** Why a namespaced layer was not a fuse-overlayfs one, which every process of the user would see. */
async function whyNotFuse(ctx: ProjectContext): Promise<string> {
  const support = await overlaySupport(ctx.store.home);
  return support.ok && support.how === 'namespaced' && support.noFuse ? ` (Not fuse-overlayfs, which they would see: ${support.noFuse}.)` : '';
}

function runMode(env: ModeEnv, item: ProvisionItem, dst: string): Promise<ModeOutcome> {
  switch (item.mode) {
    case 'copy':
      return provisionCopy(env, item, dst);
    case 'hardlink':
      return provisionHardlink(env, item, dst);
    case 'share':
      return provisionShare(env, item, dst);
    case 'cow':
      return provisionCow(env, item, dst);
  }
}

/**
 * The workspace path for an item, with its existing parent resolved. Threat: a tracked symlink
 * in the branch (`vendor -> /etc`) would carry a copy or a mount outside the workspace.
 */
function destinationFor(task: Task, item: ProvisionItem): string | null {
  const dst = path.join(task.path, item.path);
  let parent = path.dirname(dst);
  while (!lexists(parent)) parent = path.dirname(parent);
  const real = fs.realpathSync(parent);
  return real === task.path || isStrictlyInside(task.path, real) ? dst : null;
}

