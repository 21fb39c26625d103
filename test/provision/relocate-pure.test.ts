import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  foreignTokens,
  pathCandidates,
  rewritePaths,
  scanEmbeds,
  scanTree,
} from '../../src/provision/relocate/embeds.js';
import { directTree, relocate } from '../../src/provision/relocate/relocate.js';
import type { Task } from '../../src/state/types.js';
import type { ProjectContext } from '../../src/workspace/context.js';
import { tmpDir } from '../helpers/repo.js';

/** Finding and rewriting the main checkout's absolute path in a tree's files (issue 13 §3), on plain data. */

describe('foreignTokens', () => {
  it.each([
    ['#!/w/main/.venv/bin/python3\n', ['/w/main/.venv/bin/python3']],
    [
      'export NODE_PATH="/w/main/node_modules/a:/w/main/node_modules/.pnpm/node_modules:$NODE_PATH"',
      ['/w/main/node_modules/a', '/w/main/node_modules/.pnpm/node_modules'],
    ],
    ['{"url": "file:///w/main/pkg", "dir_info": {"editable": true}}', ['/w/main/pkg']],
    ['/w/main\n', ['/w/main']],
    ['/w/main-other/x /w/mainx', []],
    ['/x/w/main/y', []],
    ['home = /usr/bin\n', []],
  ])('%j', (text, expected) => {
    expect(foreignTokens(text, '/w/main', null)).toEqual(expected);
  });

  it('leaves the workspace alone when it lives inside the main checkout', () => {
    expect(
      foreignTokens('#!/w/main/.worktrees/a/.venv/bin/python\n/w/main/src\n', '/w/main', '/w/main/.worktrees/a'),
    ).toEqual(['/w/main/src']);
  });
});

describe('rewritePaths', () => {
  it('rewrites each path under the root, keeps what it is told to, and nothing that merely starts alike', () => {
    const text = '#!/w/main/.venv/bin/python\nVIRTUAL_ENV="/w/main/.venv"\n/w/main-other/x\n/w/main/only-here\n';
    const { text: out, kept } = rewritePaths(text, '/w/main', '/h/ws/a', (t) => t === '/w/main/only-here');
    expect(out).toBe('#!/h/ws/a/.venv/bin/python\nVIRTUAL_ENV="/h/ws/a/.venv"\n/w/main-other/x\n/w/main/only-here\n');
    expect(kept).toEqual(['/w/main/only-here']);
  });

  it('does not rewrite twice when the workspace is inside the main checkout', () => {
    expect(rewritePaths('/w/main/.wt/a/x /w/main/x', '/w/main', '/w/main/.wt/a').text).toBe(
      '/w/main/.wt/a/x /w/main/.wt/a/x',
    );
  });
});

describe('pathCandidates and scanEmbeds', () => {
  function tree(files: Record<string, string>, links: Record<string, string> = {}): string {
    const root = tmpDir();
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), content);
    }
    for (const [rel, target] of Object.entries(links)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.symlinkSync(target, path.join(root, rel));
    }
    return root;
  }

  it('a venv: pyvenv.cfg, bin/, and the .pth, .egg-link, editable finders and direct_url.json of site-packages; nothing else is read', () => {
    const venv = tree(
      {
        'pyvenv.cfg': 'home = /usr/bin\ncommand = /usr/bin/python3 -m venv /w/main/.venv\n',
        'bin/pip': '#!/w/main/.venv/bin/python3\n',
        'lib/python3.11/site-packages/__editable__.p-0.1.pth': '/w/main/src\n',
        'lib/python3.11/site-packages/__editable___p_0_1_finder.py': "MAPPING = {'p': '/w/main/src/p'}\n",
        'lib/python3.11/site-packages/p.egg-link': '/w/main/src\n.',
        'lib/python3.11/site-packages/p-0.1.dist-info/direct_url.json': '{"url": "file:///w/main"}',
        'lib/python3.11/site-packages/p-0.1.dist-info/RECORD': 'p/__init__.py,,\n',
        'lib/python3.11/site-packages/other/mod.py': '# /w/main is named here, in a module warren does not read\n',
        'bin/blob': 'x\0/w/main/lib\n',
      },
      { 'bin/python3': '/usr/bin/python3', 'bin/linked': '/w/main/.venv/bin/python3' },
    );
    const candidates = pathCandidates(venv).sort();
    expect(candidates).not.toContain('lib/python3.11/site-packages/other/mod.py');
    expect(candidates).not.toContain('lib/python3.11/site-packages/p-0.1.dist-info/RECORD');
    const scan = scanEmbeds(venv, '/w/main');
    expect(scan.checked).toBe(candidates.length);
    expect(scan.embeds.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'bin/blob', kind: 'binary' },
      { path: 'bin/linked', kind: 'link' },
      { path: 'bin/pip', kind: 'text' },
      { path: 'lib/python3.11/site-packages/__editable__.p-0.1.pth', kind: 'text' },
      { path: 'lib/python3.11/site-packages/__editable___p_0_1_finder.py', kind: 'text' },
      { path: 'lib/python3.11/site-packages/p-0.1.dist-info/direct_url.json', kind: 'text' },
      { path: 'lib/python3.11/site-packages/p.egg-link', kind: 'text' },
      { path: 'pyvenv.cfg', kind: 'text' },
    ]);
  });

  it("a pnpm node_modules: every .bin pnpm makes, scoped packages too; npm's relative .bin links are read and pass", () => {
    const nm = path.join(
      tree(
        {
          'node_modules/.modules.yaml': 'layoutVersion: 5\n',
          'node_modules/.bin/tool': 'export NODE_PATH="/w/main/node_modules/.pnpm/node_modules"\n',
          'node_modules/.pnpm/node_modules/.bin/x': 'export NODE_PATH="/w/main/node_modules/.pnpm"\n',
          'node_modules/.pnpm/a@1.0.0/node_modules/a/node_modules/.bin/y': 'NODE_PATH=/w/main/node_modules\n',
          'node_modules/.pnpm/@s+b@1.0.0/node_modules/@s/b/node_modules/.bin/z': 'NODE_PATH=/w/main/node_modules\n',
          'node_modules/.pnpm/a@1.0.0/node_modules/a/index.js': '"/w/main"',
        },
        { 'node_modules/.bin/npm-style': '../a/cli.js' },
      ),
      'node_modules',
    );
    const scan = scanEmbeds(nm, '/w/main');
    expect(scan.embeds.map((e) => e.path).sort()).toEqual([
      '.bin/tool',
      '.pnpm/@s+b@1.0.0/node_modules/@s/b/node_modules/.bin/z',
      '.pnpm/a@1.0.0/node_modules/a/node_modules/.bin/y',
      '.pnpm/node_modules/.bin/x',
    ]);
    expect(scan.checked).toBe(6); // .modules.yaml, the four shims, npm-style
  });

  it('any other tree: nothing is read; a file (`.env`) is not a tree, and asking under it is not an error', () => {
    const other = tree({ 'a.txt': '/w/main\n', 'bin/x': '#!/w/main/x\n', '.env': 'A=/w/main\n' });
    expect(pathCandidates(other)).toEqual([]);
    expect(pathCandidates(path.join(other, '.env'))).toEqual([]);
    expect(scanTree(path.join(other, '.env'), '/w/main', '.env')).toEqual([
      { root: '/w/main', checked: 0, embeds: [] },
    ]);
  });
});

describe('a tree that names the checkout through a symlink to it', () => {
  it('finds that spelling too, and relocates both to the workspace', () => {
    const base = tmpDir();
    const main = path.join(base, 'main');
    const link = path.join(base, 'link');
    const ws = path.join(base, 'ws');
    fs.mkdirSync(path.join(main, 'src'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.symlinkSync(main, link);
    const venv = path.join(ws, '.venv');
    fs.mkdirSync(path.join(venv, 'bin'), { recursive: true });
    fs.mkdirSync(path.join(venv, 'lib/python3.11/site-packages'), { recursive: true });
    fs.writeFileSync(
      path.join(venv, 'pyvenv.cfg'),
      `home = /usr/bin\ncommand = /usr/bin/python3 -m venv ${link}/.venv\n`,
    );
    fs.writeFileSync(path.join(venv, 'bin/pip'), `#!${link}/.venv/bin/python3\n`);
    fs.writeFileSync(path.join(venv, 'lib/python3.11/site-packages/__editable__.p-0.1.pth'), `${main}/src\n`);
    const scans = scanTree(venv, main, '.venv');
    expect(scans.map((s) => s.root)).toEqual([main, link]);
    expect(scans[1]?.embeds.map((e) => e.path).sort()).toEqual(['bin/pip', 'pyvenv.cfg']);
    const tree = directTree(venv);
    const parts = scans.map((scan) => relocate(tree, scan, ws, '.venv', main));
    expect(parts.flatMap((p) => p.left)).toEqual([]);
    expect(fs.readFileSync(path.join(venv, 'bin/pip'), 'utf8')).toBe(`#!${ws}/.venv/bin/python3\n`);
    expect(fs.readFileSync(path.join(venv, 'lib/python3.11/site-packages/__editable__.p-0.1.pth'), 'utf8')).toBe(
      `${ws}/src\n`,
    );
  });
});

describe('audit says isolated only when it was checked', () => {
  it("a record without a check (an older warren's) is not called plainly isolated; one with a file left is NOT isolated", async () => {
    const { provisionAudit: section } = await import('../../src/provision/provision-steps.js');
    const base = {
      path: '.venv',
      mode: 'cow',
      requested: 'cow',
      method: 'overlay',
      source: '/main/.venv',
      entries: 2,
      bytes: 2048,
      ms: 1,
    };
    const left = [
      {
        path: 'lib/python3.11/site-packages/local.pth',
        why: 'names /main/local-lib, which the workspace does not have',
      },
    ];
    const task = {
      id: 't1',
      data: {
        provision: [
          { ...base, isolated: true, contained: true },
          {
            ...base,
            isolated: true,
            contained: true,
            relocation: {
              from: '/main',
              to: '/ws',
              checked: 20,
              rewritten: [{ path: 'bin/pip', sha256: 'x' }],
              left: [],
            },
          },
          { ...base, isolated: false, relocation: { from: '/main', to: '/ws', checked: 20, rewritten: [], left } },
        ],
      },
    } as unknown as Task;
    const out = await section?.collect({} as ProjectContext, task);
    expect(out?.lines).toEqual([
      '.venv: cow (overlay), isolated (verified when provisioned: no symlink leads outside the workspace; not checked for absolute paths to the main checkout (`warren provision t1 --refresh` checks)); 2 entries, 2.0 KiB',
      '.venv: cow (overlay), isolated (verified when provisioned: no symlink leads outside the workspace; 1 file(s) that named the main checkout by absolute path rewritten to name the workspace, and read back); 2 entries, 2.0 KiB',
      '.venv: cow (overlay), NOT isolated: 1 file(s) still name the main checkout by absolute path (lib/python3.11/site-packages/local.pth: names /main/local-lib, which the workspace does not have); 2 entries, 2.0 KiB',
    ]);
  });
});
