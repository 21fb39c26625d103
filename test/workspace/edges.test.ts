import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitIn, makeRepo, refsAndWorktrees, tmpDir, type TestRepo } from '../helpers/repo.js';

/** Issue 12 §7: bad input exits 2, refusals come before the first mutation, and nothing is silent or misleading. */

interface Refusal {
  error: { code: string; message: string; hint?: string; details?: Record<string, unknown> };
}

/** A YAML alias bomb: ten levels of ten aliases each would expand to 10^10 nodes. */
function aliasBomb(): string {
  let text = 'a: &a [x, x, x, x, x, x, x, x, x, x]\n';
  let previous = 'a';
  for (let i = 0; i < 10; i++) {
    text += `b${i}: &b${i} [${Array.from({ length: 10 }, () => `*${previous}`).join(', ')}]\n`;
    previous = `b${i}`;
  }
  return text;
}

function taskPath(repo: TestRepo, id: string): string {
  return path.join(repo.home, 'worktrees', fs.readdirSync(path.join(repo.home, 'worktrees'))[0] ?? '', id);
}

describe('bad input exits 2', () => {
  it('a YAML alias bomb in warren.yaml is CONFIG_INVALID (exit 2) for new, and blocks neither list, scan nor gc', async () => {
    const repo = makeRepo();
    expect((await repo.warrenJson('new', 'feat', 'ok', '--no-sync')).code).toBe(0);
    fs.rmSync(taskPath(repo, 'ok'), { recursive: true, force: true });
    repo.write('warren.yaml', aliasBomb());
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<Refusal>('new', 'feat', 'B-1');
    expect(res.code).toBe(2);
    expect(res.json.error.code).toBe('CONFIG_INVALID');
    expect(res.json.error.message).toMatch(/warren\.yaml could not be read as data: .*at most 100 YAML aliases/);
    expect(refsAndWorktrees(repo.root)).toBe(before);

    for (const command of ['list', 'scan']) {
      const ran = await repo.warrenJson(command);
      expect(ran.code, `${command}: ${ran.stdout}`).toBe(0);
      expect(ran.stderr).toMatch(
        /^warren: warn: .*warren\.yaml could not be read as data.* ignored here: this command needs nothing from it/m,
      );
    }
    // gc still collects: the task whose folder is gone (its git record included) is displaced and kept; a prunable stray goes.
    const gc = await repo.warrenJson<{ removed: { kind: string }[]; kept: { kind: string; path: string }[] }>('gc');
    expect(gc.code, gc.stdout).toBe(0);
    expect(gc.json.kept.map((k) => k.kind)).toContain('displaced');
    expect(gc.stderr).toMatch(/warren: warn: /);
  });

  it('timeout: 0s is refused by validation (exit 2), before anything is created', async () => {
    const repo = makeRepo();
    for (const yaml of [
      'setup:\n  - { id: s, run: "true", timeout: 0s }\n',
      'verify:\n  - { id: v, run: "true", timeout: 0.0m }\n',
      'kill_grace: 0ms\n',
    ]) {
      repo.write('warren.yaml', yaml);
      const before = refsAndWorktrees(repo.root);
      const res = await repo.warrenJson<Refusal>('new', 'feat', 'Z-1', '--no-sync');
      expect(res.code, res.stdout).toBe(2);
      expect(res.json.error.code).toBe('CONFIG_INVALID');
      expect(res.json.error.message).toMatch(/(timeout|kill_grace): a duration greater than zero/);
      expect(refsAndWorktrees(repo.root)).toBe(before);
    }
  });

  it('a 5,000-character --base, or one that cannot name a ref, is BRANCH_INVALID (exit 2); a commit with ~N still works', async () => {
    const repo = makeRepo();
    repo.write('two.txt', '2');
    repo.commit('second');
    const before = refsAndWorktrees(repo.root);
    for (const base of ['a'.repeat(5000), 'no such:ref', 'main..HEAD', '-x']) {
      const res = await repo.warrenJson<Refusal>('new', 'feat', 'L-1', '--base', base);
      expect(res.code, base.slice(0, 20)).toBe(2);
      expect(res.json.error.code).toBe('BRANCH_INVALID');
      expect(res.json.error.message.length).toBeLessThan(400);
    }
    expect(refsAndWorktrees(repo.root)).toBe(before);
    const ok = await repo.warrenJson<{ baseCommit: string }>('new', 'feat', 'L-2', '--base', 'main~1', '--no-sync');
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.json.baseCommit).toBe(repo.git('rev-parse', 'main~1'));
  });
});

describe('refused before the first mutation', () => {
  it('rm --delete-branch when another worktree has the branch checked out: refused, naming it; the task stays ready', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'D-1', '--no-sync');
    const other = path.join(tmpDir(), 'other');
    repo.git('worktree', 'add', '-q', '-f', other, 'feat/D-1');
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<Refusal>('rm', 'D-1', '--delete-branch');
    expect(res.code).toBe(1);
    expect(res.json.error.code).toBe('BRANCH_CHECKED_OUT');
    expect(res.json.error.message).toContain(`branch feat/D-1 is also checked out in ${other}`);
    expect(res.json.error.hint).toMatch(/without --delete-branch/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
    expect(fs.existsSync(made.json.path)).toBe(true);
    expect((await repo.warrenJson<{ state: string }>('show', 'D-1')).json.state).toBe('ready');
    // Without --delete-branch it goes, and the branch stays for the other worktree.
    expect((await repo.warrenJson('rm', 'D-1')).code).toBe(0);
  });
});

describe('nothing silent, nothing misleading', () => {
  it('new says on stderr, once, and as an event, that it fast-forwarded the base and moved the main checkout', async () => {
    const repo = makeRepo();
    const origin = path.join(path.dirname(repo.root), 'origin.git');
    execFileSync('git', ['clone', '-q', '--bare', repo.root, origin]);
    repo.git('remote', 'add', 'origin', origin);
    repo.git('fetch', '-q', 'origin');
    repo.git('branch', '-q', '--set-upstream-to=origin/main', 'main');
    const other = path.join(path.dirname(repo.root), 'other');
    execFileSync('git', ['clone', '-q', origin, other]);
    gitIn(other, 'config', 'user.name', 'Other');
    gitIn(other, 'config', 'user.email', 'other@example.invalid');
    const from = repo.git('rev-parse', 'main');
    fs.writeFileSync(path.join(other, 'up.txt'), 'up');
    gitIn(other, 'add', '-A');
    gitIn(other, 'commit', '-q', '-m', 'upstream');
    gitIn(other, 'push', '-q', 'origin', 'main');
    const to = gitIn(other, 'rev-parse', 'HEAD');

    const res = await repo.warren('new', 'feat', 'F-1');
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stderr.split('\n').filter((l) => l.includes('fast-forwarded'));
    expect(lines).toEqual([
      `warren: warn: fast-forwarded main from ${from.slice(0, 12)} to ${to.slice(0, 12)} (refs/remotes/origin/main) before branching; ${repo.root} (which has main checked out) moved with it; --no-sync leaves it as it is`,
    ]);
    const show = await repo.warrenJson<{ events: { kind: string; level: string; from?: string; to?: string }[] }>(
      'show',
      'F-1',
    );
    expect(show.json.events).toContainEqual(
      expect.objectContaining({ kind: 'base.fast_forwarded', level: 'warn', from, to }),
    );

    // A new that fails after the fast-forward no longer claims the base is as it was.
    fs.writeFileSync(path.join(other, 'up2.txt'), 'up');
    gitIn(other, 'add', '-A');
    gitIn(other, 'commit', '-q', '-m', 'upstream 2');
    gitIn(other, 'push', '-q', 'origin', 'main');
    // git cannot lock the new branch's ref: `git worktree add -b feat/F-2` fails after the sync.
    fs.mkdirSync(path.join(repo.root, '.git', 'refs', 'heads', 'feat'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, '.git', 'refs', 'heads', 'feat', 'F-2.lock'), '');
    const failed = await repo.warrenJson<Refusal>('new', 'feat', 'F-2');
    expect(failed.json.error.code).toBe('CREATE_FAILED');
    expect(failed.json.error.message).toContain(
      `main stays fast-forwarded to refs/remotes/origin/main (${gitIn(other, 'rev-parse', 'HEAD').slice(0, 12)}, from ${to.slice(0, 12)}), and ${repo.root} with it`,
    );
    expect(failed.json.error.message).not.toContain('as they were');
  });

  it("a share path that provisioning skipped does not raise the task's risk", async () => {
    const repo = makeRepo({ files: { 'README.md': '# t\n', '.gitignore': 'cache/\n' } });
    fs.mkdirSync(path.join(repo.root, 'cache'));
    fs.writeFileSync(path.join(repo.root, 'cache', 'x'), 'x');
    repo.write(
      'warren.yaml',
      'provision:\n  - { path: ../outside, mode: share }\n  - { path: missing-dir, mode: share }\n',
    );
    repo.commit('config');
    const skipped = await repo.warrenJson<{ risk: { level: string; reasons: string[] }; warnings: { kind: string }[] }>(
      'new',
      'feat',
      'S-1',
      '--no-sync',
    );
    expect(skipped.code, skipped.stdout).toBe(0);
    expect(skipped.json.warnings.filter((w) => w.kind === 'provision.skip')).toHaveLength(2);
    expect(skipped.json.risk).toMatchObject({ level: 'low', reasons: [] });
    // --require-sandbox is not refused for a path that can never be shared.
    expect((await repo.warrenJson('new', 'feat', 'S-2', '--no-sync', '--require-sandbox')).code).toBe(0);

    repo.write('warren.yaml', 'provision:\n  - { path: cache, mode: share }\n');
    repo.commit('share cache');
    const shared = await repo.warrenJson<{ risk: { level: string; reasons: string[] } }>(
      'new',
      'feat',
      'S-3',
      '--no-sync',
    );
    expect(shared.json.risk.level).toBe('medium');
    expect(shared.json.risk.reasons).toEqual(['cache is shared (mode share): a write there changes every workspace']);
  });

  it('land of a landed task with nothing new says it is landed, naming the commit', async () => {
    const repo = makeRepo();
    const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'N-1', '--no-sync');
    fs.writeFileSync(path.join(made.json.path, 'n.txt'), 'n');
    expect((await repo.warrenJson('checkpoint', 'N-1')).code).toBe(0);
    const landed = await repo.warrenJson<{ commit: string }>('land', 'N-1');
    expect(landed.code).toBe(0);
    const again = await repo.warrenJson<Refusal>('land', 'N-1');
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('NOTHING_TO_LAND');
    expect(again.json.error.message).toContain(
      `task N-1 is already landed on main (as ${landed.json.commit.slice(0, 12)}) and has no commit since; nothing to land`,
    );
    expect(again.json.error.hint).not.toMatch(/Commit work with/);
    expect(again.json.error.hint).toContain('warren rm N-1');
  });
});
