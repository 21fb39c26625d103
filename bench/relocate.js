// Trees that name the main checkout by absolute path (issue 13 §3): what it costs to make a
// workspace's venv name the workspace, against `cp -a` of the same venv measured in the same
// run, by each way the issue names. Not a test: prints numbers, never fails on a slow machine.
//
//   npm run bench relocate             (builds first)
//   BENCH_RUNS=5 node bench/relocate.js
//
// The venv is real and offline: `python3 -m venv`, an editable install of the project and five
// local wheels, built by a PEP 517 backend of a few lines (test/helpers/ecosystems.ts's).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathCandidates, scanTree } from '../dist/provision/relocate/embeds.js';
import { directTree, relocate } from '../dist/provision/relocate/relocate.js';
import { machine, median, printTable, sh, time, tmp } from './lib.js';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const env = { ...process.env, PIP_NO_INDEX: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' };

const BACKEND = `import base64, hashlib, os, zipfile
HERE = os.path.dirname(os.path.abspath(__file__))
NAME, VERSION = open(os.path.join(HERE, 'NAME')).read().split()
def _wheel(d, files):
    info = f'{NAME}-{VERSION}.dist-info'
    files = {**files, f'{info}/METADATA': f'Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n',
             f'{info}/WHEEL': 'Wheel-Version: 1.0\\nGenerator: bench\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
             f'{info}/entry_points.txt': f'[console_scripts]\\n{NAME}-tool = {NAME}:main\\n'}
    name = f'{NAME}-{VERSION}-py3-none-any.whl'
    rec = []
    with zipfile.ZipFile(os.path.join(d, name), 'w') as z:
        for arc, text in files.items():
            z.writestr(arc, text)
            h = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()
            rec.append(f'{arc},sha256={h},{len(text.encode())}')
        rec.append(f'{info}/RECORD,,')
        z.writestr(f'{info}/RECORD', '\\n'.join(rec) + '\\n')
    return name
def build_wheel(d, config_settings=None, metadata_directory=None):
    src = os.path.join(HERE, 'src'); files = {}
    for dp, _, ns in os.walk(src):
        for n in ns:
            files[os.path.relpath(os.path.join(dp, n), src)] = open(os.path.join(dp, n)).read()
    return _wheel(d, files)
def build_editable(d, config_settings=None, metadata_directory=None):
    return _wheel(d, {f'__editable__.{NAME}-{VERSION}.pth': os.path.join(HERE, 'src') + '\\n'})
`;

function pkg(dir, name, version) {
  fs.mkdirSync(path.join(dir, 'src', name), { recursive: true });
  fs.writeFileSync(path.join(dir, 'backend.py'), BACKEND);
  fs.writeFileSync(
    path.join(dir, 'pyproject.toml'),
    '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
  );
  fs.writeFileSync(path.join(dir, 'NAME'), `${name} ${version}\n`);
  for (let i = 0; i < 20; i++)
    fs.writeFileSync(
      path.join(dir, 'src', name, i === 0 ? '__init__.py' : `m${i}.py`),
      `VALUE = ${i}\ndef main():\n    print(__file__)\n`,
    );
}

/** `python3 -m venv` + the editable project + the wheels: what a task would do to make its own. */
function makeVenv(root, wheels) {
  sh(python, ['-m', 'venv', '.venv'], { cwd: root, env });
  sh(path.join(root, '.venv/bin/pip'), ['install', '-q', '--no-index', '--no-build-isolation', '-e', '.', ...wheels], {
    cwd: root,
    env,
  });
}

function count(dir) {
  let n = 0;
  const stack = [dir];
  while (stack.length)
    for (const e of fs.readdirSync(stack.pop(), { withFileTypes: true }))
      (n++, e.isDirectory() && stack.push(path.join(e.path ?? e.parentPath, e.name)));
  return n;
}

const base = tmp();
const main = path.join(base, 'main');
pkg(main, 'app', '0.1');
const wheelDir = path.join(base, 'wheels');
fs.mkdirSync(wheelDir);
const bootstrap = path.join(base, 'bootstrap');
sh(python, ['-m', 'venv', bootstrap], { env });
const wheels = [];
for (let i = 0; i < 5; i++) {
  const src = path.join(base, `lib${i}`);
  pkg(src, `lib${i}`, '1.0');
  sh(path.join(bootstrap, 'bin/pip'), ['wheel', '-q', '--no-index', '--no-build-isolation', '-w', wheelDir, src], {
    env,
  });
  wheels.push(path.join(wheelDir, `lib${i}-1.0-py3-none-any.whl`));
}
makeVenv(main, wheels);
const venv = path.join(main, '.venv');
const entries = count(venv);
const hasUv = (() => {
  try {
    sh('uv', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

const rows = { cp: [], detect: [], rewrite: [], both: [], recreate: [], uv: [] };
for (let r = 0; r < runs; r++) {
  const ws = path.join(base, `ws${r}`);
  fs.mkdirSync(ws);
  sh('cp', ['-a', path.join(main, 'src'), path.join(ws, 'src')]); // what the worktree holds: the tracked source
  rows.cp.push((await time(() => sh('cp', ['-a', venv, path.join(ws, '.venv')]))).ms);
  let scans;
  rows.detect.push((await time(() => (scans = scanTree(path.join(ws, '.venv'), main, '.venv')))).ms);
  let outcome;
  rows.rewrite.push(
    (await time(() => (outcome = relocate(directTree(path.join(ws, '.venv')), scans[0], ws, '.venv', main)))).ms,
  );
  rows.both.push(rows.detect.at(-1) + rows.rewrite.at(-1));
  if (outcome.left.length > 0 || outcome.rewritten.length === 0)
    throw new Error(`bench: relocation did not do its work: ${JSON.stringify(outcome)}`);
  const again = path.join(base, `re${r}`);
  pkg(again, 'app', '0.1');
  rows.recreate.push((await time(() => makeVenv(again, wheels))).ms);
  if (hasUv) {
    const uvDir = path.join(base, `uv${r}`);
    pkg(uvDir, 'app', '0.1');
    rows.uv.push(
      (
        await time(
          () => (
            sh('uv', ['venv', '-q', '.venv'], { cwd: uvDir }),
            sh(
              'uv',
              ['pip', 'install', '-q', '--offline', '--no-index', '--no-build-isolation', '-e', '.', ...wheels],
              { cwd: uvDir, env: { ...env, VIRTUAL_ENV: path.join(uvDir, '.venv') } },
            )
          ),
        )
      ).ms,
    );
  }
}

// No walk: where a tree is no venv and no pnpm store, nothing is read but a few directory listings.
const npmTree = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../node_modules');
const npmEntries = count(npmTree);
const npmDetect = median(
  Array.from({ length: runs }, () => {
    const t = process.hrtime.bigint();
    scanTree(npmTree, '/nonexistent-main', 'node_modules');
    return Number(process.hrtime.bigint() - t) / 1e6;
  }),
);

console.log(
  `relocation benchmark — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine()}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  `a real venv: python3 -m venv + pip install -e . + 5 local wheels, ${entries} entries; ${pathCandidates(venv).length} files read, ${scanTree(venv, main, '.venv')[0].embeds.length} name the main checkout; median of ${runs}`,
);
printTable(
  "making a workspace's venv name the workspace",
  [
    { name: 'cp -a .venv (baseline)', ms: median(rows.cp) },
    { name: 'detect: read the candidate files', ms: median(rows.detect), note: 'once per snapshot for cow' },
    { name: "rewrite in the task's layer + read back", ms: median(rows.rewrite), note: 'per task' },
    { name: 'detect + rewrite (warren: copy / hardlink)', ms: median(rows.both) },
    {
      name: 'recreate: python3 -m venv + pip install (offline)',
      ms: median(rows.recreate),
      note: "the ecosystem's own fast path",
    },
    hasUv
      ? { name: 'recreate: uv venv + uv pip install (offline)', ms: median(rows.uv) }
      : { name: 'recreate: uv (not installed here)', ms: NaN },
  ],
  'cp -a .venv (baseline)',
);
console.log(
  `\ndetect on warren's own node_modules (npm layout, ${npmEntries} entries, no venv, no pnpm store): ${npmDetect.toFixed(1)} ms`,
);
fs.rmSync(base, { recursive: true, force: true });
