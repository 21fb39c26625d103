import type { TaskStatus } from './status.js';

/** `warren status` for people. Pure. */
export function formatStatus(id: string, status: TaskStatus): string {
  const lines: string[] = [];
  lines.push(status.tracked.length === 0 ? 'tracked: clean' : `tracked: ${status.tracked.length} change(s)`);
  for (const t of status.tracked.slice(0, 50)) lines.push(`  ${t.code.trim() || '??'} ${t.path}`);
  for (const p of status.provisioned) {
    const flag = p.affectsAllSharers ? ' — SHARED: these changes affect every workspace sharing it and the main checkout' : p.isolated ? '' : ' — not isolated';
    lines.push(`${p.path} (${p.mode}): ${p.unknown ?? (p.changedCount === 0 ? 'unchanged' : `${p.changedCount} change(s)`)}${flag}`);
    for (const c of p.changed.slice(0, 20)) lines.push(`  ${c.change.padEnd(8)} ${c.path}`);
    if (p.changedCount > 20) lines.push(`  … ${p.changedCount - 20} more (--json lists up to 500)`);
    if (p.writtenThrough) lines.push(`  written in place through a hard link (the main checkout changed too): ${p.writtenThrough.slice(0, 10).join(', ')}`);
  }
  if (status.stale) {
    for (const s of status.staleLockfiles) lines.push(`stale: ${s.path} ${s.now === null ? 'is gone' : 'changed'} since the provisioned tree was installed; run \`warren provision ${id} --refresh\` (or reinstall)`);
  } else {
    lines.push('stale: no');
  }
  return lines.join('\n');
}
