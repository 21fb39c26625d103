import path from 'node:path';
import { fileAt, filesIn } from '../git/trees.js';
import type { Repository } from '../git/repo.js';

/**
 * What the failing tests import (issue 41): a test runner names the failing test file, not the
 * source file a task broke — `FAIL test/m0.test.js`, where `src/m0.js` is what changed. So the
 * JavaScript and TypeScript files a gate's failure names are read from the integrated tree, and
 * the files they import by a relative path (`require('../src/m0.js')`, `import … from './x'`,
 * `import('./x')`, `export … from './x'`; one level, not their imports in turn) count as named
 * too. A task that changed one of them is a likely culprit. Package imports (`'lodash'`) and other
 * languages' imports are not followed.
 */

/** The extensions of a source file whose imports are read. */
const SOURCE = /\.(?:[cm]?[jt]sx?)$/;
/** What a specifier without an extension may resolve to, in Node's and the bundlers' order. */
const RESOLVE_EXTENSIONS = ['.js', '.ts', '.mjs', '.cjs', '.jsx', '.tsx', '.mts', '.cts', '.json'];
/** At most this many files the failure names are read (a failure naming hundreds names no one). */
const MAX_FILES = 20;
/** At most this many tokens of the failure are looked up. */
const MAX_TOKENS = 200;
/** A named file longer than this is not read for imports. */
const MAX_SOURCE = 512 * 1024;

/** The tokens of a failure text that may be a source file: a path ending in a JS/TS extension, without `:line:col`. Pure. */
export function namedSourceFiles(text: string): string[] {
  const out = new Set<string>();
  for (const raw of text.split(/[\s'"`()[\]{}<>,]+/)) {
    const token = raw.replace(/(?::\d+)+:?$/, '').replace(/^\.\//, '');
    if (token.length > 3 && token.length < 1024 && SOURCE.test(token) && !token.includes('://')) out.add(token);
  }
  return [...out];
}

/**
 * The repository paths a named token may be: itself when relative, and for an absolute path (a
 * stack trace's, in the gate's workspace) each tail of it after a `/`, the longest first. Pure.
 */
export function repoPathsOf(token: string): string[] {
  const parts = token.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) return [];
  if (!token.startsWith('/')) return [parts.join('/')];
  return parts.map((_, i) => parts.slice(i).join('/')); // the longest first
}

/** The relative specifiers a JS/TS source imports or requires. Pure. */
export function relativeSpecifiers(source: string): string[] {
  const out = new Set<string>();
  const patterns = [
    /\brequire\s*\(\s*(['"])(\.{1,2}\/[^'"\n]*)\1\s*\)/g,
    /\bimport\s*\(\s*(['"])(\.{1,2}\/[^'"\n]*)\1\s*\)/g,
    /\b(?:import|export)\b[^'";]*?\bfrom\s*(['"])(\.{1,2}\/[^'"\n]*)\1/g,
    /\bimport\s*(['"])(\.{1,2}\/[^'"\n]*)\1/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) out.add(m[2] as string);
  return [...out];
}

/**
 * The repository paths `spec`, imported from `file`, may be: the path itself, with each
 * extension, or a folder's index; nothing outside the repository. A TypeScript import of `./x.js`
 * may mean `./x.ts`. Pure.
 */
export function importTargets(file: string, spec: string): string[] {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
  if (joined.startsWith('../') || joined === '..' || joined.startsWith('/')) return [];
  const base = joined.replace(/\/$/, '');
  const out = [base, ...RESOLVE_EXTENSIONS.map((e) => base + e), ...RESOLVE_EXTENSIONS.map((e) => `${base}/index${e}`)];
  const js = /\.([cm]?)js(x?)$/.exec(base);
  if (js) out.push(`${base.slice(0, -js[0].length)}.${js[1]}ts${js[2]}`);
  return out;
}

/**
 * The paths the source files a failure names import, read from `commit` (the integrated tree
 * that failed): what a task must have changed to be named by the failure through its tests.
 */
export async function importedByFailure(repo: Repository, commit: string, text: string): Promise<Set<string>> {
  const imported = new Set<string>();
  const tokens = namedSourceFiles(text).slice(0, MAX_TOKENS).map(repoPathsOf);
  if (tokens.length === 0) return imported;
  const present = new Set(await filesIn(repo, commit, [...new Set(tokens.flat())]));
  // Each token is the longest of its tails that is a file there (not `index.js` of the root, for `/…/src/index.js`).
  const files = new Set(tokens.map((tails) => tails.find((t) => present.has(t))).filter((f) => f !== undefined));
  for (const file of [...files].slice(0, MAX_FILES)) {
    const source = await fileAt(repo, commit, file);
    if (source === null || source.length > MAX_SOURCE) continue;
    for (const spec of relativeSpecifiers(source)) for (const p of importTargets(file, spec)) imported.add(p);
  }
  return imported;
}
