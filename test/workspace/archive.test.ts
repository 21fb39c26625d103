import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openProject, openStore } from '../../src/composition.js';
import {
  archiveStamp,
  ignoredWhy,
  parseArchiveMessage,
  parseArchiveRef,
  archiveMessage,
} from '../../src/workspace/archive.js';
import { archiveRecords, recordArchive } from '../../src/workspace/archive-records.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { makeRepo, type TestRepo } from '../helpers/repo.js';

interface Err {
  error: { code: string; message: string; hint?: string };
}
interface Archived {
  id: string;
  ref: string;
  at: string;
  commit: string;
  tip: string;
  type: string;
  branch: string;
  base: string;
}

async function project(repo: TestRepo): Promise<ProjectContext> {
  const store = openStore(repo.home);
  onTestFinished(() => store.close());
  return openProject(repo.root, { store });
}

async function newTask(repo: TestRepo, id: string): Promise<string> {
  const res = await repo.warrenJson<{ path: string }>('new', 'feat', id);
  expect(res.code, res.stderr).toBe(0);
  return res.json.path;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
}

/** Every file and symlink under `dir` (not `.git`), with its mode and content digest or link target. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string): void => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (rel === '' && name === '.git') continue;
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) visit(r);
      else if (st.isSymbolicLink()) out[r] = `link ${fs.readlinkSync(path.join(dir, r))}`;
      else
        out[r] = `${(st.mode & 0o777).toString(8)} ${createHash('sha256')
          .update(fs.readFileSync(path.join(dir, r)))
          .digest('hex')}`;
    }
  };
  visit('');
  return out;
}

/** What git says about the workspace: status (staged and unstaged apart), HEAD and branch. */
function gitState(ws: string): { status: string; head: string; branch: string; log: string } {
  return {
    status: git(ws, 'status', '--porcelain=v1', '-z', '--untracked-files=all'),
    head: git(ws, 'rev-parse', 'HEAD').trim(),
    branch: git(ws, 'symbolic-ref', '--short', 'HEAD').trim(),
    log: git(ws, 'log', '--format=%H %s').trim(),
  };
}

describe('rm --discard and restore', () => {
  it('round-trips a workspace byte for byte: unlanded commits, staged, unstaged, deleted, untracked, binary, odd names, modes and links', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# r\n',
        'src/a.txt': 'a\nb\nc\n',
        'old.txt': 'old\n',
        'tool.sh': '#!/bin/sh\n',
        '.gitignore': 'build/\n',
      },
    });
    const ws = await newTask(repo, 'D-1');
    // An unlanded commit.
    fs.writeFileSync(path.join(ws, 'src/a.txt'), 'a\nB\nc\n');
    git(ws, 'commit', '-q', '-am', 'capital B');
    // Staged, then changed again (the index and the file differ), a staged new file, a staged deletion.
    fs.writeFileSync(path.join(ws, 'src/a.txt'), 'a\nB\nc\nstaged\n');
    git(ws, 'add', 'src/a.txt');
    fs.writeFileSync(path.join(ws, 'src/a.txt'), 'a\nB\nc\nstaged\nunstaged\n');
    fs.writeFileSync(path.join(ws, 'staged-new.txt'), 'new and staged\n');
    git(ws, 'add', 'staged-new.txt');
    git(ws, 'rm', '-q', 'old.txt');
    // An unstaged deletion, a mode change, untracked files with hostile names, a binary, a link.
    fs.rmSync(path.join(ws, 'README.md'));
    fs.chmodSync(path.join(ws, 'tool.sh'), 0o755);
    fs.writeFileSync(path.join(ws, 'notes with spaces.md'), 'untracked\n');
    fs.writeFileSync(path.join(ws, 'line\nbreak.txt'), 'newline in the name\n');
    fs.mkdirSync(path.join(ws, 'deep/er'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'deep/er/blob.bin'), Buffer.from([0, 1, 2, 255, 0, 10, 13, 10]));
    fs.symlinkSync('src/a.txt', path.join(ws, 'link-to-a'));
    // Ignored: not the task's work, removed as a plain rm removes it.
    fs.mkdirSync(path.join(ws, 'build'));
    fs.writeFileSync(path.join(ws, 'build/out.js'), 'built\n');

    const before = listing(ws);
    const state = gitState(ws);
    const tip = state.head;

    // A plain rm refuses exactly as before, and changes nothing.
    const plain = await repo.warrenJson<Err>('rm', 'D-1');
    expect(plain.code).toBe(1);
    expect(plain.json.error.code).toBe('WORKSPACE_DIRTY');
    expect(plain.json.error.hint).toContain('warren rm D-1 --discard');
    expect(listing(ws)).toEqual(before);

    const discarded = await repo.warrenJson<{ removed: boolean; branchDeleted: boolean; archive: string }>(
      'rm',
      'D-1',
      '--discard',
    );
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.json).toMatchObject({ removed: true, branchDeleted: true });
    expect(discarded.json.archive).toMatch(/^refs\/warren\/archive\/D-1\/\d{8}T\d{6}\.\d{3}Z$/);
    expect(fs.existsSync(ws)).toBe(false);
    expect(repo.git('branch', '--list', 'feat/D-1')).toBe('');
    // The unlanded commit is kept by the archive.
    expect(repo.git('rev-parse', `${discarded.json.archive}^1`)).toBe(tip);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/warren/archive/')).toBe(discarded.json.archive);

    const archived = await repo.warrenJson<Archived[]>('list', '--archived');
    expect(archived.json).toHaveLength(1);
    expect(archived.json[0]).toMatchObject({
      id: 'D-1',
      ref: discarded.json.archive,
      tip,
      type: 'feat',
      branch: 'feat/D-1',
      base: 'main',
    });
    expect((await repo.warren('list', '--archived')).stdout).toContain('D-1');

    const restored = await repo.warrenJson<{ id: string; path: string; state: string; archive: string }>(
      'restore',
      'D-1',
    );
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json).toMatchObject({ id: 'D-1', path: ws, state: 'ready', archive: discarded.json.archive });
    expect(listing(ws)).toEqual(Object.fromEntries(Object.entries(before).filter(([k]) => !k.startsWith('build/'))));
    expect(gitState(ws)).toEqual(state);
    // The restored task is a task like any other: its diff shows the same work.
    const diff = await repo.warrenJson<{ files: { path: string; status: string }[] }>('diff', 'D-1', '--stat');
    expect(diff.json.files.map((f) => `${f.status} ${f.path}`)).toEqual([
      'deleted README.md',
      'added deep/er/blob.bin',
      'added line\nbreak.txt',
      'added link-to-a',
      'added notes with spaces.md',
      'deleted old.txt',
      'modified src/a.txt',
      'added staged-new.txt',
      'modified tool.sh',
    ]);
  });

  it('refuses what it cannot do and changes nothing: no archive, the ID taken, the branch made again meanwhile', async () => {
    const repo = makeRepo();
    const none = await repo.warrenJson<Err>('restore', 'nope');
    expect(none.code).toBe(2);
    expect(none.json.error.code).toBe('TASK_NOT_FOUND');

    const ws = await newTask(repo, 'D-2');
    fs.writeFileSync(path.join(ws, 'wip.txt'), 'wip\n');
    expect((await repo.warren('rm', 'D-2', '--discard')).code).toBe(0);
    await newTask(repo, 'D-2');
    const taken = await repo.warrenJson<Err>('restore', 'D-2');
    expect(taken.json.error.code).toBe('TASK_EXISTS');
    expect((await repo.warren('rm', 'D-2')).code).toBe(0); // a plain rm keeps its branch
    const branch = await repo.warrenJson<Err>('restore', 'D-2');
    expect(branch.json.error.code).toBe('BRANCH_EXISTS');
    expect((await repo.warrenJson<unknown[]>('list')).json).toEqual([]);
    const both = await repo.warrenJson<Err>('rm', 'D-2', '--discard', '--delete-branch');
    expect(both.code).toBe(2);
  });

  it("restores here, and says so, where warren.yaml runs tasks on a host: the archive's files are here", async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'D-3');
    fs.writeFileSync(path.join(ws, 'wip.txt'), 'wip\n');
    expect((await repo.warren('rm', 'D-3', '--discard')).code).toBe(0);
    // Tasks of this repository now run on a host no config.yaml declares: none is asked.
    fs.writeFileSync(path.join(repo.root, 'warren.yaml'), 'runner: ssh:box\n');
    repo.git('add', 'warren.yaml');
    repo.git('commit', '-q', '-m', 'tasks on a host');
    expect((await repo.warren('trust', '--yes')).code).toBe(0);
    const restored = await repo.warren('restore', 'D-3');
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout + restored.stderr).toContain(
      "restored on this machine, not by warren.yaml's runner ssh:box",
    );
    const shown = await repo.warrenJson<{ path: string; data: { runner?: string } }>('show', 'D-3');
    expect(fs.readFileSync(path.join(shown.json.path, 'wip.txt'), 'utf8')).toBe('wip\n');
    expect(shown.json.data.runner).toBe('local');
  });

  it('a task discarded twice restores the newer archive; gc deletes archives past archive.keep and lists them', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': 'archive: { keep: 2d }\n' } });
    let ws = await newTask(repo, 'D-3');
    fs.writeFileSync(path.join(ws, 'first.txt'), 'first\n');
    expect((await repo.warren('rm', 'D-3', '--discard')).code).toBe(0);
    ws = await newTask(repo, 'D-3');
    fs.writeFileSync(path.join(ws, 'second.txt'), 'second\n');
    expect((await repo.warren('rm', 'D-3', '--discard')).code).toBe(0);
    const [older, newer] = (await repo.warrenJson<Archived[]>('list', '--archived')).json;
    expect(older && newer && older.at < newer.at).toBe(true);
    expect((await repo.warren('restore', 'D-3')).code).toBe(0);
    expect(fs.existsSync(path.join(ws, 'second.txt'))).toBe(true);
    expect(fs.existsSync(path.join(ws, 'first.txt'))).toBe(false);

    // Three days old: past keep (2d). The same commit under a ref named three days ago, as warren records what it made.
    const old = `refs/warren/archive/D-3/${archiveStamp(new Date(Date.now() - 3 * 86_400_000))}`;
    repo.git('update-ref', old, older?.commit ?? '');
    const ctx = await project(repo);
    expect(recordArchive(ctx, 'D-3', old, older?.commit ?? '')).toBe(true);
    const gc = await repo.warrenJson<{ removed: { kind: string; action: string; id?: string; path?: string }[] }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed.filter((r) => r.kind === 'archive')).toEqual([
      { kind: 'archive', action: 'delete-ref', id: 'D-3', path: old, branch: 'feat/D-3' },
    ]);
    expect((await repo.warren('gc')).stdout).not.toContain('archive');
    expect([...archiveRecords(ctx, 'D-3').keys()].sort()).toEqual([older?.ref, newer?.ref]);
    expect((await repo.warrenJson<Archived[]>('list', '--archived')).json.map((a) => a.ref)).toEqual([
      older?.ref,
      newer?.ref,
    ]);
  });

  it('gc never acts on an archive.keep the user has not trusted: a landed keep of 30m keeps archives the trusted time, saying so, until `warren trust`', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': '' } });
    const ws = await newTask(repo, 'K-1');
    fs.writeFileSync(path.join(ws, 'work.txt'), 'discarded a minute ago\n');
    const discarded = await repo.warrenJson<{ archive: string }>('rm', 'K-1', '--discard');
    expect(discarded.code, discarded.stderr).toBe(0);
    // An hour old: past the keep an agent landed (the archive just made is not), well inside the default the user trusted (14d).
    const [archived] = (await repo.warrenJson<Archived[]>('list', '--archived')).json;
    const hourOld = `refs/warren/archive/K-1/${archiveStamp(new Date(Date.now() - 3_600_000))}`;
    repo.git('update-ref', hourOld, archived?.commit ?? '');
    expect(recordArchive(await project(repo), 'K-1', hourOld, archived?.commit ?? '')).toBe(true);
    // What a landed task leaves in the main checkout, not trusted by the user.
    fs.writeFileSync(path.join(repo.root, 'warren.yaml'), 'archive: { keep: 30m }\n');

    const gc = await repo.warrenJson<{
      removed: { kind: string }[];
      kept: { kind: string; path: string; reason: string }[];
    }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed.filter((r) => r.kind === 'archive')).toEqual([]);
    expect(gc.json.kept.filter((k) => k.kind === 'archive')).toEqual([
      {
        kind: 'archive',
        path: hourOld,
        reason: expect.stringMatching(
          /archive\.keep \(30m\) is not the one you trusted \(14d\).*`warren trust`/,
        ) as string,
      },
    ]);
    expect((await repo.warrenJson<Archived[]>('list', '--archived')).json.map((a) => a.ref)).toContain(hourOld);

    expect((await repo.warren('trust', '--yes')).code).toBe(0);
    const trusted = await repo.warrenJson<{ removed: { kind: string; path?: string }[] }>('gc');
    expect(trusted.json.removed.filter((r) => r.kind === 'archive').map((r) => r.path)).toContain(hourOld);
  });

  it('restores the archive warren recorded, not a forged one dated 2099; the forged ref is listed as ignored, and gc keeps it and goes on', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': 'archive: { keep: 2d }\n' } });
    const ws = await newTask(repo, 'F-1');
    fs.writeFileSync(path.join(ws, 'mine.txt'), 'the real work\n');
    const discarded = await repo.warrenJson<{ archive: string }>('rm', 'F-1', '--discard');
    expect(discarded.code, discarded.stderr).toBe(0);
    const real = discarded.json.archive;

    // What an agent can do, sharing the repository's refs: an archive-shaped commit of its own, under warren's namespace, dated 2099.
    const fed = (input: string, ...args: string[]): string =>
      execFileSync('git', args, { cwd: repo.root, input, encoding: 'utf8' }).trim();
    const blob = fed('evil\n', 'hash-object', '-w', '--stdin');
    const tree = fed(`100644 blob ${blob}\tevil.txt\n`, 'mktree');
    const message = repo.git('log', '-1', '--format=%B', real);
    const forgedCommit = fed(message, 'commit-tree', tree, '-p', `${real}^1`, '-p', `${real}^2`);
    const forged = 'refs/warren/archive/F-1/20990101T000000.000Z';
    repo.git('update-ref', forged, forgedCommit);

    const listed = await repo.warrenJson<Archived[]>('list', '--archived');
    expect(listed.json.map((a) => a.ref)).toEqual([real]);
    expect(listed.stderr).toContain(`warren: warn: not listed: ${forged}: warren did not make it`);
    expect(listed.stderr).toContain(`\`git update-ref -d ${forged}\` deletes it`);

    const restored = await repo.warrenJson<{ archive: string; path: string; ignored: { ref: string; why: string }[] }>(
      'restore',
      'F-1',
    );
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json.archive).toBe(real);
    expect(restored.json.ignored.map((i) => [i.ref, i.why])).toEqual([[forged, 'unrecorded']]);
    expect(restored.stderr).toContain(`warren: warn: passed over ${forged}: warren did not make it`);
    expect(fs.readFileSync(path.join(restored.json.path, 'mine.txt'), 'utf8')).toBe('the real work\n');
    expect(fs.existsSync(path.join(restored.json.path, 'evil.txt'))).toBe(false);
    const shown = await repo.warrenJson<{ events: { kind: string; level: string; ref?: string }[] }>('show', 'F-1');
    expect(shown.json.events.filter((e) => e.kind === 'archive.ignored')).toEqual([
      expect.objectContaining({ level: 'warn', ref: forged, why: 'unrecorded' }),
    ]);

    // gc: the forged ref is kept and said why; an expired archive of warren's is still deleted.
    const expired = `refs/warren/archive/F-1/${archiveStamp(new Date(Date.now() - 3 * 86_400_000))}`;
    repo.git('update-ref', expired, real);
    recordArchive(await project(repo), 'F-1', expired, repo.git('rev-parse', real));
    const gc = await repo.warrenJson<{
      removed: { kind: string; path?: string }[];
      kept: { kind: string; path: string; reason: string }[];
    }>('gc');
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.json.removed.filter((r) => r.kind === 'archive').map((r) => r.path)).toEqual([expired]);
    expect(gc.json.kept.filter((k) => k.kind === 'archive')).toEqual([
      { kind: 'archive', path: forged, reason: expect.stringContaining('warren did not make it') },
    ]);
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/warren/archive/').split('\n').sort()).toEqual([
      real,
      forged,
    ]);
  });

  it('an archive made before warren recorded them is read back from its task.archived event, and restores', async () => {
    const repo = makeRepo();
    const ws = await newTask(repo, 'F-2');
    fs.writeFileSync(path.join(ws, 'old.txt'), 'from before\n');
    const discarded = await repo.warrenJson<{ archive: string }>('rm', 'F-2', '--discard');
    expect(discarded.code, discarded.stderr).toBe(0);
    // The database as an older warren left it: no archives table, only the event.
    const before = openStore(repo.home);
    before.db.exec("DROP TABLE archives; DELETE FROM schema_migrations WHERE name = '006-archives'");
    before.close();
    const ctx = await project(repo);
    expect([...archiveRecords(ctx, 'F-2').values()].map((r) => [r.ref, r.commit])).toEqual([
      [discarded.json.archive, repo.git('rev-parse', discarded.json.archive)],
    ]);
    const restored = await repo.warrenJson<{ archive: string; path: string }>('restore', 'F-2');
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.json.archive).toBe(discarded.json.archive);
    expect(fs.readFileSync(path.join(restored.json.path, 'old.txt'), 'utf8')).toBe('from before\n');
  });

  it('tells an archive warren made from one it did not, one moved since, and one dated in the future (pure)', () => {
    const now = new Date('2026-12-01T00:00:00.000Z');
    const [a, b] = ['a'.repeat(40), 'b'.repeat(40)];
    const ref = 'refs/warren/archive/T-1/20261130T191218.123Z';
    expect(ignoredWhy(ref, a, a, '2026-11-30T19:12:18.123Z', now)).toBeNull();
    expect(ignoredWhy(ref, a, null, '2026-11-30T19:12:18.123Z', now)?.why).toBe('unrecorded');
    expect(ignoredWhy(ref, a, null, '2099-01-01T00:00:00.000Z', now)?.why).toBe('unrecorded');
    expect(ignoredWhy(ref, a, b, '2026-11-30T19:12:18.123Z', now)).toMatchObject({
      why: 'moved',
      reason: expect.stringContaining(
        `points at ${a.slice(0, 12)}, not at the commit warren archived (${b.slice(0, 12)})`,
      ),
    });
    expect(ignoredWhy(ref, a, a, '2099-01-01T00:00:00.000Z', now)?.why).toBe('future');
    expect(ignoredWhy("refs/warren/archive/T-1/x';rm -rf ~", a, null, null, now)?.reason).toContain(
      "`git update-ref -d 'refs/warren/archive/T-1/x'\\'';rm -rf ~'` deletes it",
    );
  });

  it('names archives by UTC time and reads their facts back from the commit message (pure)', () => {
    expect(archiveStamp(new Date('2026-11-30T19:12:18.123Z'))).toBe('20261130T191218.123Z');
    expect(parseArchiveRef('refs/warren/archive/T-1/20261130T191218.123Z')).toEqual({
      id: 'T-1',
      at: '2026-11-30T19:12:18.123Z',
    });
    expect(parseArchiveRef('refs/warren/archive/T-1/yesterday')).toBeNull();
    expect(parseArchiveRef('refs/warren/archive/a/b/20261130T191218.123Z')).toBeNull();
    const task = { id: 'T-1', type: 'spike', branch: 'spike/T-1', base: 'main', baseCommit: 'a'.repeat(40) };
    expect(parseArchiveMessage(archiveMessage(task, true))).toEqual({
      type: 'spike',
      branch: 'spike/T-1',
      base: 'main',
      baseCommit: 'a'.repeat(40),
    });
    expect(archiveMessage(task, false)).toContain('every change comes back unstaged');
    expect(parseArchiveMessage('a commit someone else wrote\n')).toBeNull();
    expect(parseArchiveMessage(archiveMessage({ ...task, data: { sandbox: 'bwrap' } }, true))?.sandbox).toBe('bwrap');
  });
});
