import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from '../helpers/capabilities.js';
import { BIN, makeRepo, refsAndWorktrees } from '../helpers/repo.js';
import { treeDigest } from '../helpers/tree.js';

/** Every hostile name exits 2 with the rule named, and creates nothing: no branch, directory, row or lock. */
describe('hostile task IDs and types', () => {
  const cases: [string, string[], RegExp][] = [
    ['shell syntax', ['feat', '--', 'x; rm -rf ~'], /must match \^\[A-Za-z0-9\]/],
    ['a parent path', ['feat', '--', '../up'], /must match/],
    ['a leading dash', ['feat', '--', '-rf'], /must match/],
    ['a slash', ['feat', '--', 'a/b'], /must match/],
    ['an at sign', ['feat', '--', '@'], /must match/],
    ['an empty string', ['feat', '--', ''], /must match/],
    ['65 characters', ['feat', '--', 'a'.repeat(65)], /at most 64 characters/],
    ['a double dot', ['feat', '--', 'a..b'], /no "\.\."/],
    ['a .lock suffix', ['feat', '--', 'x.lock'], /\.lock/],
    ['a leading dot', ['feat', '--', '.hidden'], /must match/],
    ['a trailing dot (a branch name git refuses)', ['feat', '--', 'a.'], /breaks git's branch-name rules/],
    ['an unknown type', ['hack', 'T-1'], /not one of feat, fix, refactor, docs, chore/],
    ['a type with a slash', ['feat/x', 'T-1'], /not one of/],
  ];

  it.each(cases)('refuses %s', async (_name, args, rule) => {
    const repo = makeRepo();
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warrenJson<{ error: { code: string; message: string } }>('new', ...args);
    expect(res.code).toBe(2);
    expect(['ID_INVALID', 'TYPE_INVALID', 'BRANCH_INVALID']).toContain(res.json.error.code);
    expect(res.json.error.message).toMatch(rule);
    expect(res.json.error.message).toMatch(/Nothing was created/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
    // No directory, no lock, no row.
    expect(fs.existsSync(path.join(repo.home, 'worktrees'))).toBe(false);
    expect(fs.existsSync(path.join(repo.home, 'locks'))).toBe(false);
    const list = await repo.warrenJson<unknown[]>('list');
    expect(list.json).toEqual([]);
  });

  it('treats a dash-led ID without -- as an unknown option: usage error, exit 2, nothing created', async () => {
    const repo = makeRepo();
    const before = refsAndWorktrees(repo.root);
    const res = await repo.warren('new', 'feat', '-rf');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/unknown option '-rf'/);
    expect(refsAndWorktrees(repo.root)).toBe(before);
  });

  it('accepts the longest valid ID (64 characters)', async () => {
    const repo = makeRepo();
    const res = await repo.warren('new', 'chore', 'a'.repeat(64));
    expect(res.code).toBe(0);
  });

  it('refuses hostile IDs on every command that takes one', async () => {
    const repo = makeRepo();
    for (const cmd of [
      ['rm', '--', '../x'],
      ['show', '--', 'a/b'],
    ]) {
      const res = await repo.warrenJson<{ error: { code: string } }>(...cmd);
      expect(res.code).toBe(2);
      expect(res.json.error.code).toBe('ID_INVALID');
    }
  });
});

// Root, to chown a WARREN_HOME to uid 65534 and to run warren as that user.
const noNobody = unavailable(import.meta.filename, 'nobody');

describe.skipIf(noNobody !== null)('a WARREN_HOME that belongs to another user', () => {
  it('is refused by every command, root included, and nothing in it changes', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'mine')).code).toBe(0);
    // As if uid 65534 had made it, and root ran `sudo warren …` with WARREN_HOME passed on.
    execFileSync('chown', ['-R', '65534:65534', repo.home]);
    const before = treeDigest(repo.home);
    for (const args of [
      ['list'],
      ['rm', 'mine'],
      ['exec', 'mine', '--', 'touch', 'root-was-here'],
      ['gc'],
      ['serve', '--port', '0'],
    ]) {
      const res = await repo.warrenJson<{ error: { code: string; message: string; hint: string } }>(...args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.json.error.code).toBe('HOME_NOT_OWNED');
      expect(res.json.error.message).toBe(
        `WARREN_HOME ${repo.home} belongs to uid 65534, and warren is running as uid 0: files it or your commands wrote there would belong to uid 0, and uid 65534's warren could not change or remove them. Nothing was changed.`,
      );
      expect(res.json.error.hint).toMatch(/sudo -u '#65534' warren/);
    }
    expect(treeDigest(repo.home)).toBe(before);
    // Given back, it works again: nothing was lost.
    execFileSync('chown', ['-R', '0:0', repo.home]);
    expect((await repo.warren('rm', 'mine')).code).toBe(0);
  });

  it("is refused the other way round: uid 65534 over root's WARREN_HOME gets the same clear error, not EACCES", () => {
    const repo = makeRepo();
    fs.mkdirSync(repo.home);
    fs.chmodSync(path.dirname(repo.home), 0o755);
    const r = spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, BIN, '--json', 'list'],
      {
        cwd: '/',
        env: { ...process.env, WARREN_HOME: repo.home },
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('HOME_NOT_OWNED');
    expect(fs.readdirSync(repo.home)).toEqual([]);
  });
});
