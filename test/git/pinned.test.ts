import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, tmpDir, type TestRepo } from '../helpers/repo.js';

/**
 * git never runs what a workspace's agent wrote. An agent (unsandboxed, or before the sandbox
 * pinned these files) rewrites what git follows from its workspace — the `.git` file, its git
 * directory's `commondir`, a `config.worktree` — to name a program; warren's next git call there
 * (status, diff, audit, checkpoint, rm, the dashboard's fleet) must run none of it, and say why.
 */

type ErrorJson = { error: { code: string; message: string; hint?: string } };

/** A marker the hostile program writes: it must never appear. */
function trap(): { file: string; command: string } {
  const file = path.join(tmpDir('warren-trap-'), 'ran');
  return { file, command: `touch ${file}; false` };
}

async function task(repo: TestRepo): Promise<{ ws: string; gitDir: string }> {
  const made = await repo.warrenJson<{ path: string }>('new', 'feat', 'agent');
  expect(made.code, made.stderr).toBe(0);
  fs.writeFileSync(path.join(made.json.path, 'work.txt'), 'work\n');
  const gitDir =
    /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(made.json.path, '.git'), 'utf8'))?.[1]?.trim() ?? '';
  return { ws: made.json.path, gitDir };
}

/** Every command that runs git in the workspace for the user, each refused with WORKSPACE_TAMPERED. */
async function everyCommandRefuses(repo: TestRepo, marker: string, what: RegExp): Promise<void> {
  for (const args of [
    ['status', 'agent'],
    ['diff', 'agent'],
    ['audit', 'agent'],
    ['checkpoint', 'agent', '-m', 'x'],
    ['rm', 'agent'],
  ]) {
    const r = await repo.warrenJson<ErrorJson>(...args);
    expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(1);
    // Refused before any git ran: by the pin, or by the ownership check that reads the same files first.
    expect(['WORKSPACE_TAMPERED', 'OWNERSHIP_MISMATCH'], `${args.join(' ')}: ${r.json.error.message}`).toContain(
      r.json.error.code,
    );
    if (r.json.error.code === 'WORKSPACE_TAMPERED') expect(r.json.error.message).toMatch(what);
    expect(r.json.error.message).toMatch(/[Nn]othing was (changed|removed|created)/);
    expect(fs.existsSync(marker), `${args.join(' ')} ran the workspace's program`).toBe(false);
  }
  // The dashboard's fleet counts its changes through the same pin: unknown, and nothing ran.
  const list = await repo.warrenJson<{ id: string }[]>('list');
  expect(list.code).toBe(0);
  expect(fs.existsSync(marker)).toBe(false);
}

describe('git in a workspace runs nothing the workspace wrote', () => {
  it("a .git file pointed at a git directory of the agent's own, with core.fsmonitor", async () => {
    const repo = makeRepo();
    const { ws } = await task(repo);
    const { file, command } = trap();
    // A git directory of its own inside the workspace, on the task's branch, naming a program.
    const evil = path.join(ws, 'evil');
    fs.cpSync(path.join(repo.root, '.git'), evil, { recursive: true });
    fs.appendFileSync(path.join(evil, 'config'), `[core]\n\tfsmonitor = ${command}\n\tbare = false\n`);
    fs.writeFileSync(path.join(ws, '.git'), `gitdir: ${evil}\n`);
    await everyCommandRefuses(repo, file, /\.git names .*evil.*not a worktree of/);
  });

  it("the worktree's commondir pointed at a common directory of the agent's own", async () => {
    const repo = makeRepo();
    const { ws, gitDir } = await task(repo);
    const { file, command } = trap();
    const evil = path.join(ws, 'evil-common');
    fs.cpSync(path.join(repo.root, '.git'), evil, { recursive: true });
    fs.appendFileSync(path.join(evil, 'config'), `[core]\n\tfsmonitor = ${command}\n`);
    fs.writeFileSync(path.join(gitDir, 'commondir'), `${evil}\n`);
    await everyCommandRefuses(repo, file, /commondir names/);
  });

  it('a config.worktree that names a program, where extensions.worktreeConfig is on', async () => {
    const repo = makeRepo();
    repo.git('config', 'extensions.worktreeConfig', 'true');
    const { ws, gitDir } = await task(repo);
    const { file, command } = trap();
    fs.writeFileSync(path.join(gitDir, 'config.worktree'), `[core]\n\tfsmonitor = ${command}\n`);
    await everyCommandRefuses(repo, file, /config\.worktree sets core\.fsmonitor/);
    // A filter the workspace's attributes name, defined in its config.worktree: the same.
    fs.writeFileSync(path.join(gitDir, 'config.worktree'), `[filter "x"]\n\tclean = ${command}\n`);
    fs.writeFileSync(path.join(ws, '.gitattributes'), '* filter=x\n');
    await everyCommandRefuses(repo, file, /config\.worktree sets filter\.x\.clean/);
  });

  it("checkpoint runs the main checkout's hooks, never a hooks folder the workspace holds", async () => {
    const repo = makeRepo({ files: { '.gitignore': '.husky/_\n', 'README.md': '# r\n' } });
    const ran = tmpDir('warren-hooks-');
    const hook = (who: string) => `#!/bin/sh\ntouch ${path.join(ran, who)}\n`;
    fs.mkdirSync(path.join(repo.root, '.husky', '_'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, '.husky', '_', 'pre-commit'), hook('main'), { mode: 0o755 });
    repo.git('config', 'core.hooksPath', '.husky/_');
    const { ws } = await task(repo);
    // The agent's own hooks folder where the relative core.hooksPath resolves in its workspace.
    fs.mkdirSync(path.join(ws, '.husky', '_'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.husky', '_', 'pre-commit'), hook('agent'), { mode: 0o755 });
    const r = await repo.warren('checkpoint', 'agent', '-m', 'work');
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(ran, 'main'))).toBe(true);
    expect(fs.existsSync(path.join(ran, 'agent'))).toBe(false);
  });

  it('a workspace as git made it still works: status, diff, checkpoint, rm', async () => {
    const repo = makeRepo();
    await task(repo);
    expect((await repo.warren('status', 'agent')).code).toBe(0);
    expect((await repo.warren('diff', 'agent')).code).toBe(0);
    expect((await repo.warren('checkpoint', 'agent', '-m', 'w')).code).toBe(0);
    const rm = await repo.warren('rm', 'agent');
    expect(rm.code, rm.stderr).toBe(0);
  });
});
