import fs from 'node:fs';
import path from 'node:path';

/**
 * Hooks that assume `.git` is a folder: in a worktree it is a file (`gitdir: …`), so a hook that
 * reads `.git/COMMIT_EDITMSG` or `.git/hooks/…` fails there with ENOTDIR — vue's commit-msg
 * hook did. The hook's own text is read, and the local scripts it runs (`node scripts/x.js`).
 */

/** The first place `text` reads `.git` as a folder (`.git/NAME`, `'.git', 'NAME'`), or null. Pure. */
export function gitDirAssumption(text: string): string | null {
  const m =
    /(?<![\w.$/-])\.git\/[A-Za-z_][\w./-]*/.exec(text) ?? /['"]\.git['"]\s*,\s*['"][A-Za-z_][\w./-]*['"]/.exec(text);
  return m ? m[0] : null;
}

/** Local scripts a hook runs: relative paths to files in the workspace it names. Pure. */
export function scriptsNamed(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/(?<![\w./-])((?:\.\/)?[\w-][\w./-]*\.(?:js|mjs|cjs|ts|sh|py))(?![\w/-])/g)) {
    const rel = (m[1] as string).replace(/^\.\//, '');
    if (!rel.split('/').includes('..')) found.add(rel);
  }
  return [...found].slice(0, 5);
}

export interface GitDirHook {
  hook: string;
  /** The file that assumes it: the hook itself, or a script it runs (relative to the workspace). */
  file: string;
  found: string;
}

/** The hooks in `hooksDir` that assume `.git` is a folder, reading the scripts they name in `workspace`. */
export function hooksAssumingGitDir(hooksDir: string, hooks: readonly string[], workspace: string): GitDirHook[] {
  const out: GitDirHook[] = [];
  for (const hook of hooks) {
    const text = readSmall(path.join(hooksDir, hook));
    if (text === null) continue;
    const own = gitDirAssumption(text);
    if (own) {
      out.push({ hook, file: hook, found: own });
      continue;
    }
    for (const rel of scriptsNamed(text)) {
      const found = gitDirAssumption(readSmall(path.join(workspace, rel)) ?? '');
      if (found) {
        out.push({ hook, file: rel, found });
        break;
      }
    }
  }
  return out;
}

function readSmall(file: string): string | null {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > 256 * 1024) return null;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
