import { terminalText } from '../../util/terminal-text.js';
import type { PackageChange } from './packages.js';
import type { TaskStatus } from './status.js';

/** How many package lines a path shows before saying how many more there are. */
const SUMMARY_LINES = 50;

/**
 * `warren status` for people: per provisioned folder, a line per package (or top-level entry)
 * that changed; `files` lists every changed file instead. Pure.
 */
export function formatStatus(id: string, status: TaskStatus, options: { files?: boolean } = {}): string {
  const lines: string[] = [];
  lines.push(status.tracked.length === 0 ? 'tracked: clean' : `tracked: ${status.tracked.length} change(s)`);
  // A path, a package's name and version are the agent's: one line each, whatever they hold.
  for (const t of status.tracked.slice(0, 50)) lines.push(`  ${t.code.trim() || '??'} ${terminalText(t.path)}`);
  let summarised = false;
  for (const p of status.provisioned) {
    const flag = p.affectsAllSharers
      ? ' — SHARED: these changes affect every workspace sharing it and the main checkout'
      : p.isolated
        ? ''
        : ' — not isolated';
    const packages = options.files ? undefined : p.packages;
    const inPackages =
      packages && packages.some((k) => k.kind === 'package')
        ? ` in ${packages.filter((k) => k.kind === 'package').length} package(s)`
        : '';
    const counted = p.changedCount === 0 ? 'unchanged' : `${p.changedCount} change(s)${inPackages}`;
    lines.push(
      `${p.path} (${p.mode}): ${p.unknown ?? (p.replaced ? replacedLine(p.replaced, counted) : counted)}${flag}`,
    );
    if (packages) {
      summarised = true;
      for (const k of packages.slice(0, SUMMARY_LINES))
        lines.push(
          `  ${k.change.padEnd(8)} ${terminalText(k.name)}${terminalText(versions(k))} (${k.changes} change${k.changes === 1 ? '' : 's'})`,
        );
      if (packages.length > SUMMARY_LINES) lines.push(`  … ${packages.length - SUMMARY_LINES} more`);
    } else {
      const shown = options.files ? p.changed : p.changed.slice(0, 20);
      for (const c of shown) lines.push(`  ${c.change.padEnd(8)} ${terminalText(c.path)}`);
      if (p.changedCount > shown.length)
        lines.push(`  … ${p.changedCount - shown.length} more (--json lists up to ${p.changed.length})`);
    }
    if (p.replaced) {
      const own =
        p.replaced.layerChanges === 0
          ? 'it holds no change of its own'
          : `its own ${p.replaced.layerChanges} change(s) are kept, out of view`;
      lines.push(
        `  the layer is not mounted over it (that would hide it from you); ${own}; move the ${p.replaced.by} away to use the layer again`,
      );
    }
    if (p.writtenThrough)
      lines.push(
        `  written in place through a hard link (the main checkout changed too): ${p.writtenThrough
          .slice(0, 10)
          .map((w) => terminalText(w))
          .join(', ')}`,
      );
  }
  if (summarised) lines.push(`(\`warren status ${id} --files\` lists every changed file)`);
  if (status.stale) {
    for (const s of status.staleLockfiles) {
      if (s.tree && s.why) lines.push(`stale: ${s.tree} does not match ${s.path} (${s.why}); ${s.fix ?? 'reinstall'}`);
      else
        lines.push(
          `stale: ${s.path} ${s.now === null ? 'is gone' : 'changed'} since the provisioned tree was installed; run \`warren provision ${id} --refresh\` (or reinstall)`,
        );
    }
  } else {
    lines.push('stale: no');
  }
  return lines.join('\n');
}

/** `REPLACED by a plain folder (3 entries): 4 change(s) in 2 package(s) against the layer's snapshot`. Pure. */
function replacedLine(r: NonNullable<TaskStatus['provisioned'][number]['replaced']>, counted: string): string {
  if (r.by !== 'folder') return `REPLACED by a ${r.by === 'link' ? 'symlink' : 'file'}, not its copy-on-write layer`;
  const against =
    counted === 'unchanged' ? "the same as the layer's snapshot" : `${counted} against the layer's snapshot`;
  return `REPLACED by a plain folder (${r.entries} entr${r.entries === 1 ? 'y' : 'ies'}), not its copy-on-write layer: ${against}`;
}

/** ` 1.3.0`, ` 1.3.0 → 1.3.1`, ` 2.0.0 → no version`, or nothing. Pure. */
function versions(k: PackageChange): string {
  if (k.change === 'changed' && k.before !== k.after && (k.before !== undefined || k.after !== undefined))
    return ` ${k.before ?? 'no version'} → ${k.after ?? 'no version'}`;
  const v = k.after ?? k.before;
  return v === undefined ? '' : ` ${v}`;
}
