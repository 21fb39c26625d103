/**
 * How `warren new`'s build was loaded, when bin/warren.js ran it from the build's V8 code cache
 * (src/cli/code-cache.ts): told to the command through one global, because the loader and the
 * bundle it runs are two files that share no module. Absent: the command was not run that way
 * (a `warren warm` process, the library, the whole command line's build).
 */
export interface CodeCacheUse {
  cached: boolean;
  /** Why not, when not. */
  why?: string;
}

const STATE = Symbol.for('warren.codeCache');

export function setCodeCacheUse(use: CodeCacheUse): void {
  (globalThis as Record<symbol, unknown>)[STATE] = use;
}

export function codeCacheUse(): CodeCacheUse | undefined {
  return (globalThis as Record<symbol, unknown>)[STATE] as CodeCacheUse | undefined;
}
