import fs from 'node:fs';
import { changedNames } from '../git/trees.js';
import type { ProjectContext } from '../workspace/context.js';
import type { Candidate } from './chain.js';
import { failureText } from './failure-text.js';
import { importedByFailure } from './failing-imports.js';

/**
 * The likely culprits of a failing batch (issue 30 §5): entries whose task's own last `verify`
 * failed, or whose change touches a path the gate's failure names (a test runner names the
 * failing test file, a stack trace the source file; what it says passed is no failure:
 * failure-text.ts), or a file the failing tests import (failing-imports.ts). Gating the rest
 * without them first lands the rest in one run and leaves the suspects to be gated alone,
 * instead of halving blindly.
 */

/** How much of the gate's log is read for paths. */
const LOG_BYTES = 1 << 20;

/** The entries of `group` that are likely culprits, in queue order; empty when nothing points at one. */
export async function likelyCulprits(
  ctx: ProjectContext,
  group: readonly Candidate[],
  log: string | null,
): Promise<Candidate[]> {
  const text = log === null ? '' : failureText(readHead(log));
  // The failing tests' own imports, read from the tree that failed (the group's last integration).
  const last = group.at(-1);
  const imported = text === '' || !last ? new Set<string>() : await importedByFailure(ctx.repo, last.plan.commit, text);
  const out: Candidate[] = [];
  for (const c of group) {
    const task = ctx.store.getTask(ctx.key, c.entry.taskId);
    if (task?.data.verify?.passed === false) {
      out.push(c);
      continue;
    }
    if (text === '') continue;
    const changed = await changedNames(ctx.repo, c.plan.baseTip, c.plan.commit);
    if (namesAny(text, changed) || changed.some((p) => imported.has(p))) out.push(c);
  }
  return out;
}

/** Does `text` name one of `paths` (whole, as a path: not inside a longer name)? Pure. */
export function namesAny(text: string, paths: readonly string[]): boolean {
  return paths.some((p) => {
    if (p.length < 4) return false;
    let at = text.indexOf(p);
    while (at !== -1) {
      const before = at === 0 ? '' : (text[at - 1] as string);
      const after = text[at + p.length] ?? '';
      // A path starts after a separator (a space, a quote, a `/` of a longer absolute path) and ends before one.
      if (!/[\w.-]/.test(before) && !/[\w-]/.test(after)) return true;
      at = text.indexOf(p, at + 1);
    }
    return false;
  });
}

function readHead(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(LOG_BYTES);
      const n = fs.readSync(fd, buf, 0, LOG_BYTES, 0);
      return buf.subarray(0, n).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}
