import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unavailable } from './helpers/capabilities.js';
import { BIN, makeRepo, tmpDir, type TestRepo } from './helpers/repo.js';

/**
 * `warren completion bash|zsh|fish`, loaded in the real shells: commands, options, task IDs and
 * types from the state. Each script calls `warren` back, so a `warren` on PATH runs the built CLI.
 */

function shellEnv(repo: TestRepo): NodeJS.ProcessEnv {
  const bin = tmpDir('warren-bin-');
  fs.writeFileSync(
    path.join(bin, 'warren'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    { mode: 0o755 },
  );
  return {
    ...process.env,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    WARREN_HOME: repo.home,
    HOME: tmpDir('warren-shell-home-'),
  };
}

function sh(shell: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(shell, args, { cwd, env, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, `${shell}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A repository with two tasks, one archive and types of its own. */
async function fixture(): Promise<{ repo: TestRepo; env: NodeJS.ProcessEnv }> {
  const repo = makeRepo({ files: { 'README.md': '# r\n', 'warren.yaml': 'types: [feat, spike]\n' } });
  for (const id of ['alpha', 'beta', 'gone']) expect((await repo.warren('new', 'spike', id)).code).toBe(0);
  expect((await repo.warren('rm', 'gone', '--discard')).code).toBe(0);
  return { repo, env: shellEnv(repo) };
}

// [words typed, the word being completed, what it must offer]
const CASES: [string, string[]][] = [
  ['warren ', ['new', 'list', 'diff', 'restore', 'completion', 'path']],
  ['warren sh', ['show']],
  ['warren show ', ['alpha', 'beta']],
  ['warren --json diff ', ['alpha', 'beta']],
  ['warren new ', ['feat', 'spike']],
  ['warren restore ', ['gone']],
  ['warren rm alpha --d', ['--delete-branch', '--discard']],
  ['warren queue ', ['rm']],
  ['warren queue rm ', ['alpha', 'beta']],
  ['warren completion ', ['bash', 'fish', 'zsh']],
];

const noZsh = unavailable(import.meta.filename, 'zsh');
const noFish = unavailable(import.meta.filename, 'fish');

describe('warren completion', () => {
  it('bash: loads, registers for warren, and completes commands, options, task IDs, archived IDs and types', async () => {
    const { repo, env } = await fixture();
    expect(sh('bash', ['-c', 'source <(warren completion bash); complete -p warren'], repo.root, env)).toBe(
      'complete -F _warren warren\n',
    );
    // The completion function as bash calls it: COMP_WORDS and COMP_CWORD set, COMPREPLY read.
    for (const [typed, offered] of CASES) {
      const script = `source <(warren completion bash); COMP_WORDS=(${typed
        .split(' ')
        .map((w) => `'${w}'`)
        .join(' ')}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _warren; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const got = sh('bash', ['-c', script], repo.root, env).split('\n').filter(Boolean);
      expect(got, typed).toEqual(expect.arrayContaining(offered));
      if (typed.endsWith('show ')) expect(got).not.toContain('gone');
    }
    // --repo is passed on: from elsewhere, the IDs are that repository's.
    const elsewhere = sh(
      'bash',
      [
        '-c',
        `source <(warren completion bash); COMP_WORDS=(warren --repo ${repo.root} path ''); COMP_CWORD=4; _warren; echo "\${COMPREPLY[*]}"`,
      ],
      tmpDir(),
      env,
    );
    expect(elsewhere.trim().split(' ').sort()).toEqual(['alpha', 'beta']);
  });

  it.skipIf(noZsh !== null)('zsh: loads after compinit, registers _warren, and completes the same words', async () => {
    const { repo, env } = await fixture();
    expect(
      sh(
        'zsh',
        ['-fc', 'autoload -U compinit; compinit -u -D; source <(warren completion zsh); print -r -- $_comps[warren]'],
        repo.root,
        env,
      ),
    ).toBe('_warren\n');
    // zsh's completion widgets are stood in for: compadd and _describe print what they are offered.
    const stubs =
      'compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@"; }; _describe() { print -rl -- ${(P)4%%:*}; }; _files() { print files; }';
    for (const [typed, offered] of CASES) {
      const words = typed
        .split(' ')
        .map((w) => `'${w}'`)
        .join(' ');
      const got = sh(
        'zsh',
        ['-fc', `source <(warren completion zsh); ${stubs}; words=(${words}); CURRENT=\${#words}; _warren`],
        repo.root,
        env,
      )
        .split('\n')
        .filter(Boolean);
      expect(got, typed).toEqual(expect.arrayContaining(offered));
    }
  });

  it.skipIf(noFish !== null)('fish: loads and completes the same words', async () => {
    const { repo, env } = await fixture();
    for (const [typed, offered] of CASES) {
      const got = sh(
        'fish',
        ['--no-config', '-c', `warren completion fish | source; complete -C${JSON.stringify(typed)}`],
        repo.root,
        env,
      )
        .split('\n')
        .map((l) => l.split('\t')[0] ?? '')
        .filter(Boolean);
      expect(got, typed).toEqual(expect.arrayContaining(offered));
    }
  });

  it('refuses a shell it does not know, and the hidden callback says nothing outside a repository', async () => {
    const repo = makeRepo();
    const r = await repo.warrenJson<{ error: { code: string } }>('completion', 'powershell');
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('USAGE');
    const outside = spawnSync(process.execPath, [BIN, '__complete', 'ids'], {
      cwd: tmpDir(),
      env: { ...process.env, WARREN_HOME: repo.home },
      encoding: 'utf8',
    });
    expect(outside.status).toBe(0);
    expect(outside.stdout).toBe('');
    expect((await repo.warren('--help')).stdout).not.toContain('__complete');
  });
});
