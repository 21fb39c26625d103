import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WarrenError } from '../../errors.js';
import { ownerEnv } from '../../system/left-running.js';
import { runTool } from '../../system/tool.js';
import { walkTree } from '../status/manifest.js';
import { removeTreeOrThrow } from '../../system/remove-tree.js';

/**
 * Copies by the system's `cp`, which is several times faster than Node 20's `fs.cp` and keeps
 * relative symlinks verbatim (fs.cp rewrites them to absolute paths into the source tree).
 */

export type CopyMethod = 'reflink' | 'clonefile' | 'cp -a';

const reflinkByDevice = new Map<number, boolean>();

/** Can this file system clone (FICLONE)? Probed once per device with `cp --reflink=always`. */
async function canReflink(dir: string): Promise<boolean> {
  const dev = fs.statSync(dir).dev;
  const known = reflinkByDevice.get(dev);
  if (known !== undefined) return known;
  const probe = fs.mkdtempSync(path.join(dir, '.warren-reflink-'));
  try {
    fs.writeFileSync(path.join(probe, 'a'), 'probe');
    const result = await runTool(['cp', '--reflink=always', path.join(probe, 'a'), path.join(probe, 'b')]);
    reflinkByDevice.set(dev, result.exitCode === 0);
    return result.exitCode === 0;
  } finally {
    removeTreeOrThrow(probe, { inside: dir });
  }
}

/** The best isolated copy this machine offers between these two places, before making it. */
export async function bestCopyMethod(destParent: string): Promise<CopyMethod> {
  if (os.platform() === 'darwin') return 'clonefile';
  return (await canReflink(destParent)) ? 'reflink' : 'cp -a';
}

/** How often a long copy says how far it got; WARREN_PROGRESS_MS overrides it (a test seam). */
function progressEvery(): number {
  const ms = Number(process.env.WARREN_PROGRESS_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 2000;
}

/**
 * Reports, every few seconds, how many bytes a running `cp` has written: `wchar` in
 * /proc/PID/io counts what it passed to write(2) and copy_file_range(2). A copy done sooner
 * reports nothing. Silent where there is no /proc (macOS). Returns the function that stops it.
 */
export function watchCopy(pid: number, report: (bytesWritten: number) => void, everyMs = progressEvery()): () => void {
  let last = -1;
  const timer = setInterval(() => {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    } catch {
      return;
    }
    const written = Number(/^wchar:\s*(\d+)/m.exec(text)?.[1] ?? NaN);
    if (!Number.isFinite(written) || written === last || written === 0) return; // 0: a clone, so far
    last = written;
    report(written);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Starts the copy now (the child is spawned before this returns, so the caller can work while
 * it runs); `signal` kills it, and the caller deletes what it had made. The best method is
 * chosen by `cp` itself, file by file, so the caller learns which it was (bestCopyMethod) while
 * the copy runs, not before. `onProgress` hears the bytes written so far on long plain copies
 * (a clone writes no data, so it has nothing to say).
 */
export function startCopy(
  src: string | readonly string[],
  dst: string,
  signal?: AbortSignal,
  onProgress?: (bytesWritten: number) => void,
): Promise<void> {
  // Several sources go into `dst`, an existing folder, each under its own name.
  const sources = typeof src === 'string' ? [src] : src;
  fs.mkdirSync(typeof src === 'string' ? path.dirname(dst) : dst, { recursive: true });
  // macOS cp -c uses clonefile(2) on APFS; GNU cp --reflink=auto uses FICLONE and falls back per file.
  const clonefile = os.platform() === 'darwin';
  const argv = clonefile
    ? ['cp', '-c', '-a', '--', ...sources, dst]
    : ['cp', '-a', '--reflink=auto', '--', ...sources, dst];
  let stopWatching = (): void => undefined;
  const watch = onProgress && !clonefile ? (pid: number) => (stopWatching = watchCopy(pid, onProgress)) : undefined;
  // Owned: a repair after a killed `new` waits for it before deleting what it was writing.
  const env = ownerEnv();
  return runTool(argv, { env, ...(signal ? { signal } : {}), ...(watch ? { onSpawn: watch } : {}) }).then((result) => {
    stopWatching();
    if (signal?.aborted || result.exitCode === 0) return;
    throw new WarrenError('PROVISION_FAILED', `${argv.join(' ')} failed: ${firstLine(result.stderr)}`, {
      details: { argv, stderr: result.stderr },
    });
  });
}

export interface HardlinkOutcome {
  /** Counted by the fill pass; null when cp linked everything and no pass was needed. */
  linked: number | null;
  filled: number;
  /** Bytes of the files the fill pass copied. */
  filledBytes: number;
  /** Files neither linked nor copied (named, so nothing is silent). */
  failed: { path: string; error: string }[];
}

/**
 * `cp -al` semantics: directories made, files hard-linked. The kernel refuses some links
 * (fs.protected_hardlinks for files the user does not own, immutable or append-only files,
 * another file system); `cp` reports each and goes on, and the fill pass copies what is missing.
 * `signal` kills `cp`; the caller deletes what it had made.
 */
export async function hardlinkTree(src: string, dst: string, signal?: AbortSignal): Promise<HardlinkOutcome> {
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  const result = await runTool(['cp', '-al', '--', src, dst], { env: ownerEnv(), ...(signal ? { signal } : {}) });
  // Killed: what it made is deleted by whoever killed it, and nothing is filled in.
  if (signal?.aborted) return { linked: null, filled: 0, filledBytes: 0, failed: [] };
  if (!fs.existsSync(dst)) {
    throw new WarrenError('PROVISION_FAILED', `cp -al ${src} ${dst} made nothing: ${firstLine(result.stderr)}`);
  }
  if (result.exitCode === 0) return { linked: null, filled: 0, filledBytes: 0, failed: [] };
  let linked = 0;
  let filled = 0;
  let filledBytes = 0;
  const failed: HardlinkOutcome['failed'] = [];
  walkTree(src, (rel, st) => {
    if (st.isDirectory()) return;
    const target = rel === '' ? dst : path.join(dst, rel);
    let there: fs.Stats | null = null;
    try {
      there = fs.lstatSync(target);
    } catch {
      there = null;
    }
    if (there !== null) {
      if (there.ino === st.ino) linked++;
      return;
    }
    try {
      fillOne(path.join(src, rel), target, st);
      filled++;
      if (st.isFile()) filledBytes += st.size;
    } catch (err) {
      failed.push({ path: rel, error: (err as Error).message });
    }
  });
  return { linked, filled, filledBytes, failed };
}

/** Copies one entry cp -al could not link, keeping mode, times and (as root) ownership. */
function fillOne(from: string, to: string, st: fs.Stats): void {
  if (st.isSymbolicLink()) {
    fs.symlinkSync(fs.readlinkSync(from), to);
    return;
  }
  fs.copyFileSync(from, to, fs.constants.COPYFILE_FICLONE);
  fs.chmodSync(to, st.mode & 0o7777);
  if (process.getuid?.() === 0) fs.chownSync(to, st.uid, st.gid);
  fs.utimesSync(to, st.atime, st.mtime);
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
