import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openProject } from '../../src/composition.js';
import { execTask } from '../../src/run/operations.js';
import { openStore } from '../../src/composition.js';
import { makeRepo, runCli, tmpDir, type CliResult } from '../helpers/repo.js';

/**
 * Each adapter's command line with hostile prompts, through the real CLI. The agents are
 * stand-in executables on PATH that record their argv (NUL-separated) and their stdin.
 */

const STAND_IN = `#!/bin/sh
out="$AGENT_RECORD/$(basename "$0")"
for a in "$@"; do printf '%s\\0' "$a"; done > "$out.argv"
cat > "$out.stdin"
`;

const HOSTILE = [
  `-rf "double" 'single' \`tick\` $(echo sub) $HOME ; rm -rf / && echo \\\\ \n second line\n\t-tab`,
  '-',
];

function setup(): { w: (...args: string[]) => Promise<CliResult>; record: string; home: string; root: string } {
  const bin = tmpDir('warren-agents-bin-');
  const record = tmpDir('warren-agents-rec-');
  for (const name of ['claude', 'codex', 'gemini', 'aider', 'my-agent']) {
    fs.writeFileSync(path.join(bin, name), STAND_IN, { mode: 0o755 });
  }
  const repo = makeRepo({
    files: {
      'README.md': '# t\n',
      'warren.yaml': [
        'agents:',
        '  viaargv: { command: [my-agent, --flag, "x y"], prompt: argv }',
        '  viastdin: { command: [my-agent, run], prompt: stdin }',
        '  viafile: { command: [my-agent, --file], prompt: file }',
        '',
      ].join('\n'),
    },
  });
  // HOME: the built-ins copy the user's login into the task's state folder; this one has none.
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    AGENT_RECORD: record,
    HOME: tmpDir('warren-agents-home-'),
    CLAUDE_CONFIG_DIR: '',
    CODEX_HOME: '',
    GEMINI_CLI_HOME: '',
  };
  return {
    w: (...args) => runCli(args, { cwd: repo.root, home: repo.home, env }),
    record,
    home: repo.home,
    root: repo.root,
  };
}

function recorded(record: string, exe: string): { argv: string[]; stdin: string } {
  const raw = fs.readFileSync(path.join(record, `${exe}.argv`), 'utf8');
  return {
    argv: raw === '' ? [] : raw.slice(0, -1).split('\0'),
    stdin: fs.readFileSync(path.join(record, `${exe}.stdin`), 'utf8'),
  };
}

type Expect = (prompt: string, argv: string[], stdin: string) => void;

const ADAPTERS: { agent: string; exe: string; check: Expect }[] = [
  {
    agent: 'claude',
    exe: 'claude',
    check: (p, argv, stdin) => {
      expect(argv.slice(0, 5)).toEqual(['-p', '--permission-mode', 'acceptEdits', '--allowedTools', 'Bash']);
      expect(argv[5]).toBe('--session-id');
      expect(stdin).toBe(p);
    },
  },
  {
    agent: 'codex',
    exe: 'codex',
    check: (p, argv, stdin) => (
      expect(argv).toEqual(['exec', '--sandbox', 'workspace-write', '-']),
      expect(stdin).toBe(p)
    ),
  },
  {
    agent: 'gemini',
    exe: 'gemini',
    check: (p, argv, stdin) => {
      expect(argv.slice(0, 4)).toEqual(['--skip-trust', '--approval-mode', 'yolo', '--session-id']);
      expect(argv.slice(5)).toEqual([`--prompt=${p}`]);
      expect(stdin).toBe('');
    },
  },
  {
    agent: 'aider',
    exe: 'aider',
    check: (p, argv) => {
      expect(argv.slice(0, 2)).toEqual(['--yes-always', '--message-file']);
      expect(fs.readFileSync(argv[2] ?? '', 'utf8')).toBe(p);
    },
  },
  {
    agent: 'viaargv',
    exe: 'my-agent',
    check: (p, argv, stdin) => (expect(argv).toEqual(['--flag', 'x y', p]), expect(stdin).toBe('')),
  },
  {
    agent: 'viastdin',
    exe: 'my-agent',
    check: (p, argv, stdin) => (expect(argv).toEqual(['run']), expect(stdin).toBe(p)),
  },
  {
    agent: 'viafile',
    exe: 'my-agent',
    check: (p, argv) => {
      expect(argv[0]).toBe('--file');
      expect(fs.readFileSync(argv[1] ?? '', 'utf8')).toBe(p);
    },
  },
];

describe('warren run --agent: the prompt reaches the agent exactly as given', () => {
  it('every adapter, with hostile prompts (quotes, newlines, a leading -, shell syntax)', async () => {
    const { w, record } = setup();
    expect((await w('new', 'feat', 'ag')).code).toBe(0);
    for (const { agent, exe, check } of ADAPTERS) {
      for (const prompt of HOSTILE) {
        const r = await w('--json', 'run', 'ag', '--agent', agent, '--prompt', prompt);
        expect(r.code, `${agent}: ${r.stdout}${r.stderr}`).toBe(0);
        const got = recorded(record, exe);
        check(prompt, got.argv, got.stdin);
      }
    }
  });

  it('--prompt-file passes the file content; unknown agents and bad option sets are refused', async () => {
    const { w, record } = setup();
    expect((await w('new', 'feat', 'pf')).code).toBe(0);
    const file = path.join(tmpDir(), 'prompt.md');
    fs.writeFileSync(file, '-line one\n"two"\n');
    const r = await w('run', 'pf', '--agent', 'claude', '--prompt-file', file);
    expect(r.code).toBe(0);
    expect(recorded(record, 'claude').stdin).toBe('-line one\n"two"\n');

    const unknown = await w('--json', 'run', 'pf', '--agent', 'nobody', '--prompt', 'x');
    expect(unknown.code).toBe(2);
    const error = (JSON.parse(unknown.stdout) as { error: { code: string; hint: string } }).error;
    expect(error.code).toBe('AGENT_UNKNOWN');
    expect(error.hint).toContain('claude');
    expect((await w('--json', 'run', 'pf', '--agent', 'claude', '--prompt', 'x', '--prompt-file', file)).code).toBe(2);
    expect((await w('--json', 'run', 'pf', '--agent', 'claude')).code).toBe(2);
  });

  it('a prompt with a NUL byte: refused (USAGE, exit 2) before anything runs where it would go in argv; passed byte for byte on stdin or in a file', async () => {
    const { w, record, home, root } = setup();
    expect((await w('new', 'feat', 'nul')).code).toBe(0);
    const file = path.join(tmpDir(), 'nul-prompt.txt');
    const prompt = 'before\0after';
    fs.writeFileSync(file, prompt);
    for (const agent of ['gemini', 'viaargv']) {
      const r = await w('--json', 'run', 'nul', '--agent', agent, '--prompt-file', file);
      expect(r.code, `${agent}: ${r.stdout}${r.stderr}`).toBe(2);
      const error = (JSON.parse(r.stdout) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('USAGE');
      expect(error.message).toContain('NUL byte');
      expect(error.message).toContain('nothing was run');
    }
    // Through the library too: any argv with a NUL byte is refused before a run is recorded.
    const store = openStore(home);
    try {
      const ctx = await openProject(root, { store });
      await expect(execTask(ctx, 'nul', ['echo', 'a\0b'])).rejects.toMatchObject({ code: 'USAGE' });
    } finally {
      store.close();
    }
    // Nothing ran, and no run was recorded (so none is left open).
    expect(fs.existsSync(path.join(record, 'gemini.argv'))).toBe(false);
    expect(fs.existsSync(path.join(record, 'my-agent.argv'))).toBe(false);
    const db = new Database(path.join(home, 'state.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM runs').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
    // Where the prompt goes on stdin or in a file, a NUL byte is just a byte.
    expect((await w('run', 'nul', '--agent', 'viastdin', '--prompt-file', file)).code).toBe(0);
    expect(recorded(record, 'my-agent').stdin).toBe(prompt);
    expect((await w('run', 'nul', '--agent', 'viafile', '--prompt-file', file)).code).toBe(0);
    expect(fs.readFileSync(recorded(record, 'my-agent').argv[1] ?? '', 'utf8')).toBe(prompt);
  });
});
