import fs from 'node:fs';
import path from 'node:path';
import { listDir } from '../../util/list-dir.js';

/**
 * Trees that name the main checkout by absolute path (issue 13 §3). A venv's scripts start with
 * `#!/main/.venv/bin/python`, its `pyvenv.cfg` and `activate` name `/main/.venv`, an editable
 * install's `.pth` (or its finder module, or `easy-install.pth`) names `/main/src`; pnpm's
 * `.bin` shims export `NODE_PATH=/main/node_modules/.pnpm/…`. Copied as they are, a workspace's
 * `pip install` writes into the main checkout's venv and its tests import the main checkout's code.
 *
 * Reading every byte of a tree to find them costs twice what `cp -a` costs (measured: 161 MB,
 * 5,607 files, 1.7–2.1 s against 0.8 s), so warren reads only the files these ecosystems write
 * absolute paths into, found by listing a few directories: never a walk of the whole tree.
 */

/** Files larger than this are not text an installer wrote a path into. */
const MAX_CANDIDATE_BYTES = 1024 * 1024;

/**
 * The files of a provisioned tree (relative to its root) where an ecosystem writes absolute
 * paths: a venv (`pyvenv.cfg` at its root) — `pyvenv.cfg`, everything in `bin/`, and in each
 * `site-packages` the `.pth`, `.egg-link`, `__editable__*` finder modules and `direct_url.json`;
 * a `node_modules` — `.modules.yaml` and every `.bin/` pnpm makes (the top one, the virtual
 * store's, and each package's own in `.pnpm/<pkg>/node_modules/<name>/node_modules/.bin`).
 */
export function pathCandidates(tree: string): string[] {
  const out: string[] = [];
  const add = (dir: string, keep: (name: string) => boolean = () => true): void => {
    for (const name of listDir(path.join(tree, dir))) if (keep(name)) out.push(dir === '' ? name : `${dir}/${name}`);
  };
  if (isFile(path.join(tree, 'pyvenv.cfg'))) {
    out.push('pyvenv.cfg');
    add('bin');
    for (const lib of ['lib', 'lib64']) {
      if (!isDir(path.join(tree, lib))) continue; // lib64 is a link to lib in a venv
      for (const py of listDir(path.join(tree, lib)).filter((n) => n.startsWith('python'))) {
        const site = `${lib}/${py}/site-packages`;
        add(
          site,
          (n) => n.endsWith('.pth') || n.endsWith('.egg-link') || (n.startsWith('__editable__') && n.endsWith('.py')),
        );
        for (const n of listDir(path.join(tree, site))) {
          if (n.endsWith('.dist-info') && isFile(path.join(tree, site, n, 'direct_url.json')))
            out.push(`${site}/${n}/direct_url.json`);
        }
      }
    }
  }
  if (path.basename(tree) === 'node_modules' || isDir(path.join(tree, '.pnpm'))) {
    if (isFile(path.join(tree, '.modules.yaml'))) out.push('.modules.yaml');
    add('.bin');
    add('.pnpm/node_modules/.bin');
    for (const store of listDir(path.join(tree, '.pnpm'))) {
      const deps = `.pnpm/${store}/node_modules`;
      // The package itself is the one real directory there; its dependencies are links.
      for (const entry of dirents(path.join(tree, deps))) {
        if (!entry.isDirectory()) continue;
        const names = entry.name.startsWith('@')
          ? dirents(path.join(tree, deps, entry.name))
              .filter((e) => e.isDirectory())
              .map((e) => `${entry.name}/${e.name}`)
          : [entry.name];
        for (const name of names) add(`${deps}/${name}/node_modules/.bin`);
      }
    }
  }
  return out;
}

/** One file of a tree that names `root`: text to rewrite, a link to point again, or something warren cannot rewrite. */
export interface Embed {
  path: string;
  kind: 'text' | 'link' | 'binary';
}

/** What a tree's scan found: which files name `root`, out of how many read. */
export interface EmbedScan {
  /** The absolute path the tree was built under (the main checkout it came from). */
  root: string;
  checked: number;
  embeds: Embed[];
}

/** Reads the candidate files of `tree` for `root`. `read` reads one, relative to the tree (a seam for a layered view). */
export function scanEmbeds(
  tree: string,
  root: string,
  candidates = pathCandidates(tree),
  view: TreeReader = directReader(tree),
): EmbedScan {
  const embeds: Embed[] = [];
  for (const rel of candidates) {
    const found = embedIn(view, rel, root);
    if (found) embeds.push(found);
  }
  return { root, checked: candidates.length, embeds };
}

/**
 * Scans of a tree for `root` and for each other spelling of it the tree names itself by (a
 * venv made as `python3 -m venv /home/me/link/.venv`, where `link` is a symlink to the checkout;
 * /tmp and /private/tmp on macOS): the candidates are listed once.
 */
export function scanTree(tree: string, root: string, rel: string): EmbedScan[] {
  const candidates = pathCandidates(tree);
  const view = directReader(tree);
  return [root, ...rootAliases(view, candidates, root, rel)].map((r) => scanEmbeds(tree, r, candidates, view));
}

/**
 * The prefixes P of paths `P/<rel>` or `P/<rel>/…` in the candidate files that are not `root`
 * but resolve to it. Only those prefixes are resolved, each once.
 */
export function rootAliases(view: TreeReader, candidates: readonly string[], root: string, rel: string): string[] {
  const real = realpathOr(root);
  if (real === null) return [];
  const re = new RegExp(`(/${PATH_CHARS}*?)/${escapeRegExp(rel)}(?=/|$|[^A-Za-z0-9._~+@-])`, 'g');
  const seen = new Map<string, boolean>();
  for (const name of candidates) {
    const st = view.lstat(name);
    if (st === null || (!st.isSymbolicLink() && (!st.isFile() || st.size > MAX_CANDIDATE_BYTES))) continue;
    const text = st.isSymbolicLink() ? view.readlink(name) : view.read(name)?.toString('utf8');
    if (text === null || text === undefined) continue;
    for (const m of text.matchAll(re)) {
      const prefix = m[1];
      if (prefix === undefined || prefix === root || seen.has(prefix) || !startsAPath(text, m.index)) continue;
      seen.set(prefix, realpathOr(prefix) === real);
    }
  }
  return [...seen].filter(([, alias]) => alias).map(([prefix]) => prefix);
}

function realpathOr(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/** How the files of a tree are read: directly, or through an overlay's layers. */
export interface TreeReader {
  lstat(rel: string): fs.Stats | null;
  read(rel: string): Buffer | null;
  readlink(rel: string): string | null;
}

export function directReader(tree: string): TreeReader {
  return {
    lstat: (rel) => {
      try {
        return fs.lstatSync(path.join(tree, rel));
      } catch {
        return null; // gone, or under a file (ENOTDIR)
      }
    },
    read: (rel) => tryRead(path.join(tree, rel)),
    readlink: (rel) => tryReadlink(path.join(tree, rel)),
  };
}

/** Does this file (or link) name `root`? Null when it does not, or is not there. */
export function embedIn(view: TreeReader, rel: string, root: string): Embed | null {
  const st = view.lstat(rel);
  if (st === null) return null;
  if (st.isSymbolicLink()) {
    const target = view.readlink(rel);
    return target !== null && foreignTokens(target, root, null).length > 0 ? { path: rel, kind: 'link' } : null;
  }
  if (!st.isFile() || st.size > MAX_CANDIDATE_BYTES) return null;
  const data = view.read(rel);
  if (data === null || data.indexOf(root) < 0) return null;
  const text = data.toString('utf8');
  if (foreignTokens(text, root, null).length === 0) return null;
  return { path: rel, kind: data.subarray(0, 8192).includes(0) ? 'binary' : 'text' };
}

/** The characters that end a path written in a script, a `.pth`, a config or a PATH-like list. */
const PATH_CHARS = String.raw`[^\s"'\x60:;,()\[\]{}<>=]`;

/**
 * Whether a match at `offset` is the start of a path, not the middle of a longer one (`/main`
 * inside `/x/main`). `file://` before it is a URL of the path (pip's `direct_url.json`).
 */
function startsAPath(text: string, offset: number): boolean {
  const before = text[offset - 1];
  if (before === undefined) return true;
  if (before === '/') return text.slice(Math.max(0, offset - 7), offset) === 'file://';
  return !/[A-Za-z0-9._~+@-]/.test(before);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The paths in `text` under `root` (`root` itself or `root/…`, never `root-other/…`), except
 * those under `except` (a workspace inside the main checkout names itself with `root` too). Pure.
 */
export function foreignTokens(text: string, root: string, except: string | null): string[] {
  const re = new RegExp(`${escapeRegExp(root)}(?:/${PATH_CHARS}*)?(?!${PATH_CHARS})`, 'g');
  const found: string[] = [];
  for (const m of text.matchAll(re)) {
    if (except !== null && (m[0] === except || m[0].startsWith(`${except}/`))) continue;
    if (startsAPath(text, m.index)) found.push(m[0]);
  }
  return found;
}

/**
 * `text` with every path under `from` rewritten to the same path under `to`, except those
 * `keep` says to leave (their counterpart does not exist in the workspace). Pure.
 */
export function rewritePaths(
  text: string,
  from: string,
  to: string,
  keep: (token: string) => boolean = () => false,
): { text: string; kept: string[] } {
  const kept: string[] = [];
  const re = new RegExp(`${escapeRegExp(from)}((?:/${PATH_CHARS}*)?)(?!${PATH_CHARS})`, 'g');
  const out = text.replace(re, (match: string, rest: string, offset: number) => {
    if (!startsAPath(text, offset)) return match;
    if (match === to || match.startsWith(`${to}/`)) return match;
    if (keep(match)) {
      kept.push(match);
      return match;
    }
    return `${to}${rest}`;
  });
  return { text: out, kept };
}

/** False for anything that is not there, including under a file (`.env/pyvenv.cfg` is ENOTDIR, not ENOENT). */
function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function dirents(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function tryRead(p: string): Buffer | null {
  try {
    return fs.readFileSync(p);
  } catch {
    return null;
  }
}

function tryReadlink(p: string): string | null {
  try {
    return fs.readlinkSync(p);
  } catch {
    return null;
  }
}
