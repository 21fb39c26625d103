import fs from 'node:fs';
import path from 'node:path';
import { git } from './exec.js';
import type { Repository } from './repo.js';
import { removeTreeOrThrow } from '../system/remove-tree.js';

/**
 * Commits made where warren does not trust the files — an agent's git directory in its container
 * — brought into the repository without reading anything of theirs but objects: the loose
 * objects and packs are linked (or copied) one regular file at a time into a quarantine
 * repository of warren's own (its config, no hooks, its alternates pointing at the repository's
 * objects), and fetched from there with every object checked (`transfer.fsckObjects`). A link,
 * an `info/alternates` or a config the agent wrote is never read.
 */

const LOOSE_DIR = /^[0-9a-f]{2}$/;
const LOOSE_FILE = /^[0-9a-f]{38}([0-9a-f]{24})?$/;
const PACK_FILE = /^pack-[0-9a-f]{40}([0-9a-f]{24})?\.(pack|idx)$/;

/** A commit id as git writes one in a ref file (sha1 or sha256), or null. */
export function commitIdOf(text: string): string | null {
  const id = text.trim();
  return /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(id) ? id : null;
}

/**
 * The commit a branch points at in a git directory warren does not trust (`dir`: its loose ref,
 * else its packed-refs), reading regular files only; null when it has none of its own.
 */
export function untrustedBranchTip(dir: string, branch: string): string | null {
  const loose = readRegular(path.join(dir, 'refs', 'heads', ...branch.split('/')));
  if (loose !== null) return commitIdOf(loose);
  const packed = readRegular(path.join(dir, 'packed-refs'));
  if (packed === null) return null;
  for (const line of packed.split('\n')) {
    const [id, ref] = line.split(' ');
    if (ref === `refs/heads/${branch}` && id) return commitIdOf(id);
  }
  return null;
}

function readRegular(file: string): string | null {
  try {
    // lstat: a link (to a file of the host) or an overlay's whiteout is not a ref.
    if (!fs.lstatSync(file).isFile()) return null;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Brings `tip` and what it needs from the objects folder `objects` (untrusted) into `repo` as
 * `into` (forced: a ref of warren's own). `scratch` is an empty folder of warren's on the same
 * file system (objects are hard-linked when they can be). False when `tip` is not there or an
 * object does not pass git's checks; the repository is unchanged then.
 */
export async function fetchUntrusted(
  repo: Repository,
  objects: string,
  tip: string,
  into: string,
  scratch: string,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const q = path.join(scratch, 'quarantine.git');
  removeTreeOrThrow(q, { inside: scratch });
  try {
    await git(['init', '--bare', '--quiet', '--template=', q], { cwd: scratch, noHooks: true });
    const qObjects = path.join(q, 'objects');
    linkObjects(objects, qObjects);
    fs.mkdirSync(path.join(qObjects, 'info'), { recursive: true });
    fs.writeFileSync(
      path.join(qObjects, 'info', 'alternates'),
      `${fs.realpathSync(path.join(repo.commonDir, 'objects'))}\n`,
    );
    const named = await git(['update-ref', 'refs/import', tip], { cwd: q, noHooks: true, allowFailure: true });
    if (named.exitCode !== 0) return { ok: false, why: `commit ${tip.slice(0, 12)} is not among its objects` };
    const fetched = await git(
      [
        '-c',
        'transfer.fsckObjects=true',
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--no-recurse-submodules',
        q,
        `+refs/import:${into}`,
      ],
      { cwd: repo.root, noHooks: true, allowFailure: true },
    );
    if (fetched.exitCode !== 0) return { ok: false, why: `git refused its objects: ${fetched.stderr.trim()}` };
    return { ok: true };
  } finally {
    removeTreeOrThrow(q, { inside: scratch });
  }
}

/** Regular files only, named as git names objects; each hard-linked, or copied across file systems. */
function linkObjects(from: string, to: string): void {
  // A folder that is a link (to another repository's objects) is not read.
  const entries = (dir: string): string[] => {
    try {
      return fs.lstatSync(dir).isDirectory() ? fs.readdirSync(dir) : [];
    } catch {
      return [];
    }
  };
  const take = (source: string, target: string): void => {
    if (!fs.lstatSync(source).isFile()) return;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    try {
      fs.linkSync(source, target);
    } catch {
      fs.copyFileSync(source, target);
    }
  };
  for (const dir of entries(from)) {
    if (!LOOSE_DIR.test(dir)) continue;
    for (const file of entries(path.join(from, dir))) {
      if (LOOSE_FILE.test(file)) take(path.join(from, dir, file), path.join(to, dir, file));
    }
  }
  for (const file of entries(path.join(from, 'pack'))) {
    if (PACK_FILE.test(file)) take(path.join(from, 'pack', file), path.join(to, 'pack', file));
  }
}
