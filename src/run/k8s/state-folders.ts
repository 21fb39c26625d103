import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import type { Task } from '../../state/types.js';
import { isInside } from '../../util/paths.js';
import type { TaskClaim } from './task-claim.js';

/**
 * A run's folders outside the workspace — what it may write besides it (`writable` of the run:
 * an agent's state folder, src/run/agent-home.ts) — carried into the task's sandbox before the
 * run and back after it. In the sandbox each is a folder of its own under STATE_ROOT (the
 * template's emptyDir, beside the clone), and the run's environment names it there instead of
 * here, so the agent CLI keeps its config, sessions and transcript in the sandbox; after the run
 * they are copied back into the folder here, where `warren transcript`, `run --resume` and the
 * dashboard read them as a local run's.
 *
 * Both ways the folder travels as JSON lines, one regular file a line (`{"p": path, "m": mode,
 * "d": base64}`), written and read by the pod's node (the image needs it already for the init).
 * What comes back is the sandbox's, so it is read as hostile: only regular files, at relative
 * paths of plain names, under a size limit, written beside their name and renamed over it, in
 * folders made real (a symlink where a folder should be is removed, never followed). Files are
 * added and replaced, never deleted: what the sandbox removed stays here.
 */

/** Where a task's sandbox keeps the run's folders (warren's template mounts an emptyDir at /work). */
export const STATE_ROOT = '/work/state';

/** What a folder may bring back, whole: more is refused, and the folder here is left as it was. */
const MAX_BYTES = 256 * 1024 * 1024;
const MAX_DEPTH = 32;

/** A folder of this machine and where it is in the sandbox. */
export interface StateFolder {
  here: string;
  pod: string;
}

/** The folders of a run that are carried: each writable path outside the workspace, named in the sandbox by a hash of its path here. */
export function stateFolders(task: Task, writable: readonly string[]): StateFolder[] {
  return writable
    .filter((p) => !isInside(task.path, p))
    .map((here) => {
      const id = createHash('sha256').update(here).digest('hex').slice(0, 12);
      return {
        here,
        pod: path.posix.join(STATE_ROOT, `${path.basename(here).replace(/[^A-Za-z0-9._-]/g, '_')}-${id}`),
      };
    });
}

/** In the pod: every regular file under argv[1] as a line (links and special files are not followed). */
const PACK = `const fs = require('fs'), path = require('path');
const root = process.argv[1];
const walk = (rel, depth) => {
  let names = [];
  try { names = fs.readdirSync(path.join(root, rel)); } catch { return; }
  for (const name of names) {
    const r = rel === '' ? name : rel + '/' + name;
    const st = fs.lstatSync(path.join(root, r));
    if (st.isDirectory() && depth < ${MAX_DEPTH}) walk(r, depth + 1);
    else if (st.isFile())
      fs.writeSync(1, JSON.stringify({ p: r, m: st.mode & 0o777, d: fs.readFileSync(path.join(root, r)).toString('base64') }) + '\\n');
  }
};
walk('', 0);`;

/** In the pod: the lines on stdin written under argv[1] (the coordinator's files: read as given). */
const UNPACK = `const fs = require('fs'), path = require('path');
const root = process.argv[1];
fs.mkdirSync(root, { recursive: true, mode: 0o700 });
const text = fs.readFileSync(0, 'utf8');
for (const line of text.split('\\n')) {
  if (line === '') continue;
  const f = JSON.parse(line);
  const file = path.join(root, f.p);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, Buffer.from(f.d, 'base64'), { mode: f.m });
}`;

/** Each folder's files into the sandbox, before the run (the folder there made when missing). */
export async function sendState(task: Task, claim: TaskClaim, folders: readonly StateFolder[]): Promise<void> {
  const { execCollect } = await import('./cluster.js'); // not on every command's path: it loads client-node
  for (const folder of folders) {
    const r = await execCollect(claim.cluster, claim.pod, ['node', '-e', UNPACK, folder.pod], packHere(folder.here));
    if (r.status !== 0) {
      throw new WarrenError(
        'RUNNER_UNAVAILABLE',
        `task ${task.id}'s folder ${folder.here} could not be given to its sandbox (pod ${claim.pod}): ${lastLines(r.stderr) || `exit ${r.status}`}; nothing was run.`,
        { hint: `The sandbox's image needs node. \`warren rm ${task.id}\` deletes the claim.` },
      );
    }
  }
}

/**
 * Each folder's files from the sandbox into the folder here, after the run. Returns what could
 * not be brought (the run is over either way; the caller says it).
 */
export async function bringStateBack(claim: TaskClaim, folders: readonly StateFolder[]): Promise<string[]> {
  const { execCollect } = await import('./cluster.js');
  const problems: string[] = [];
  for (const folder of folders) {
    const r = await execCollect(claim.cluster, claim.pod, ['node', '-e', PACK, folder.pod]);
    if (r.status !== 0) {
      problems.push(`${folder.here}: ${lastLines(r.stderr) || `exit ${r.status}`} in pod ${claim.pod}`);
      continue;
    }
    problems.push(...unpackHere(folder.here, r.stdout).map((p) => `${folder.here}: ${p}`));
  }
  return problems;
}

/** The folder here as lines (regular files only; a link is not followed). */
export function packHere(root: string, rel = '', depth = 0): Buffer {
  const lines: Buffer[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(path.join(root, rel));
  } catch {
    return Buffer.alloc(0);
  }
  for (const name of names) {
    const r = rel === '' ? name : `${rel}/${name}`;
    const st = fs.lstatSync(path.join(root, r));
    if (st.isDirectory() && depth < MAX_DEPTH) lines.push(packHere(root, r, depth + 1));
    else if (st.isFile()) {
      const d = fs.readFileSync(path.join(root, r)).toString('base64');
      lines.push(Buffer.from(`${JSON.stringify({ p: r, m: st.mode & 0o777, d })}\n`));
    }
  }
  return Buffer.concat(lines);
}

/** Pure: a path the sandbox named, as plain names under the folder, or null (absolute, `..`, empty, NUL, too deep). */
export function safeRelative(p: unknown): string[] | null {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || p.startsWith('/')) return null;
  const parts = p.split('/');
  if (parts.length > MAX_DEPTH + 1 || parts.some((s) => s === '' || s === '.' || s === '..')) return null;
  return parts;
}

/**
 * What the sandbox sent, written under `root` (made earlier, by warren): each file checked, then
 * written beside its name and renamed over it. Returns what was refused (nothing is written
 * when the whole is over the limit).
 */
export function unpackHere(root: string, data: Buffer): string[] {
  if (data.length > MAX_BYTES) return [`${data.length} bytes, more than the ${MAX_BYTES} a folder may bring back`];
  const refused: string[] = [];
  for (const line of data.toString('utf8').split('\n')) {
    if (line === '') continue;
    let entry: { p?: unknown; m?: unknown; d?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      refused.push('a line that is not JSON');
      continue;
    }
    const parts = safeRelative(entry.p);
    if (parts === null || typeof entry.d !== 'string') {
      refused.push(`an entry named ${JSON.stringify(String(entry.p)).slice(0, 80)}`);
      continue;
    }
    const mode = typeof entry.m === 'number' ? (entry.m & 0o777) | 0o600 : 0o600;
    if (!writeUnder(root, parts, Buffer.from(entry.d, 'base64'), mode & 0o700))
      refused.push(`${parts.join('/')} (a folder stands there)`);
  }
  return refused;
}

/** Writes one file under `root`: folders on the way made real, the file written beside its name and renamed over it. */
function writeUnder(root: string, parts: readonly string[], data: Buffer, mode: number): boolean {
  let dir = root;
  for (const name of parts.slice(0, -1)) {
    dir = path.join(dir, name);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) fs.rmSync(dir, { force: true }); // a link or a file: removed, never followed
    if (!st?.isDirectory()) fs.mkdirSync(dir, { mode: 0o700 });
  }
  const dest = path.join(dir, parts[parts.length - 1] ?? '');
  if (fs.lstatSync(dest, { throwIfNoEntry: false })?.isDirectory()) return false;
  const tmp = path.join(dir, `.warren-${randomUUID()}`);
  try {
    fs.writeFileSync(tmp, data, { mode, flag: 'wx' });
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return true;
}

/**
 * The run's variables with paths of this machine made the sandbox's: a carried folder (or a path
 * in it) its folder there, a path in the task's TMPDIR one in the pod's /tmp, a path in the
 * workspace one in the sandbox's clone. Others are left as given.
 */
export function podValues(
  env: Record<string, string>,
  places: { folders: readonly StateFolder[]; tmp: string; workspace: string; podWorkspace: string },
): Record<string, string> {
  const under = (value: string, here: string, pod: string): string | null =>
    isInside(here, value) ? path.posix.join(pod, path.relative(here, value).split(path.sep).join('/')) : null;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    out[key] = path.isAbsolute(value)
      ? (places.folders.map((f) => under(value, f.here, f.pod)).find((v) => v !== null) ??
        under(value, places.tmp, '/tmp') ??
        under(value, places.workspace, places.podWorkspace) ??
        value)
      : value;
  }
  return out;
}

/** A command's last two lines of error output, for a message. */
export function lastLines(text: string): string {
  return text.trim().split('\n').slice(-2).join(' ');
}
