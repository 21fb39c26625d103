import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Real package-manager trees for tests, offline: a Python project with a venv made by
 * `python3 -m venv` and an editable install by `pip install -e`, and a pnpm project installed
 * from local packages. No PyPI, no registry: the Python packages are built by a PEP 517/660
 * backend of a few lines that lives in the project (so neither `wheel` nor `setuptools` is needed).
 */

const BACKEND = `"""A PEP 517/660 build backend in a few lines: tests need neither PyPI nor the wheel package."""
import base64, hashlib, os, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME, VERSION = open(os.path.join(HERE, 'NAME')).read().split()

def _wheel(directory, files):
    info = f'{NAME}-{VERSION}.dist-info'
    files = {**files,
        f'{info}/METADATA': f'Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n',
        f'{info}/WHEEL': 'Wheel-Version: 1.0\\nGenerator: warren-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
        f'{info}/entry_points.txt': f'[console_scripts]\\n{NAME}-tool = {NAME}:main\\n'}
    name = f'{NAME}-{VERSION}-py3-none-any.whl'
    record = []
    with zipfile.ZipFile(os.path.join(directory, name), 'w') as z:
        for arc, text in files.items():
            data = text.encode()
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
            record.append(f'{arc},sha256={digest},{len(data)}')
        record.append(f'{info}/RECORD,,')
        z.writestr(f'{info}/RECORD', '\\n'.join(record) + '\\n')
    return name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    src = os.path.join(HERE, 'src')
    files = {}
    for dirpath, _, names in os.walk(src):
        for n in names:
            if n.endswith('.py'):
                p = os.path.join(dirpath, n)
                files[os.path.relpath(p, src)] = open(p).read()
    return _wheel(wheel_directory, files)

def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {f'__editable__.{NAME}-{VERSION}.pth': os.path.join(HERE, 'src') + '\\n'})
`;

/** The files of a Python package `name` (module `name` with `VALUE = 1` and a `main` that prints where it was loaded from). */
export function pythonPackageFiles(name: string, version = '0.1'): Record<string, string> {
  return {
    'backend.py': BACKEND,
    'pyproject.toml': '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    NAME: `${name} ${version}\n`,
    [`src/${name}/__init__.py`]: 'VALUE = 1\n\ndef main():\n    print(__file__)\n',
  };
}

/**
 * Debian's Python, where there is one: a venv's `python` links to the interpreter it was made
 * with, and one under /root (pyenv) is out of reach of the tests that run as uid 65534.
 */
export const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

function run(cwd: string, argv: string[]): string {
  const [cmd, ...args] = argv as [string, ...string[]];
  return execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PIP_NO_INDEX: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
}

/** `python3 -m venv .venv` in `root` and `pip install -e .` of the project there (offline). */
export function makeVenv(root: string): void {
  run(root, [PYTHON, '-m', 'venv', '.venv']);
  run(root, [path.join(root, '.venv/bin/pip'), 'install', '-q', '--no-index', '--no-build-isolation', '-e', '.']);
}

/** Builds a wheel of a package `name` (made under `dir`) with `pip wheel`, offline; returns its path. */
export function buildWheel(pip: string, dir: string, name: string): string {
  const src = path.join(dir, `${name}-src`);
  for (const [rel, content] of Object.entries(pythonPackageFiles(name, '1.0'))) {
    fs.mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
    fs.writeFileSync(path.join(src, rel), content);
  }
  run(dir, [pip, 'wheel', '-q', '--no-index', '--no-build-isolation', '-w', path.join(dir, 'wheels'), src]);
  return path.join(dir, 'wheels', `${name}-1.0-py3-none-any.whl`);
}

/**
 * A pnpm project's files: `tool` (a bin that prints where it resolves `lib` from and its
 * NODE_PATH) depending on `lib`, both local `file:` packages, so `pnpm install --offline` needs no registry.
 */
export function pnpmProjectFiles(): Record<string, string> {
  return {
    'package.json': '{"name":"app","version":"1.0.0","private":true,"dependencies":{"tool":"file:./pkgs/tool"}}\n',
    'pkgs/tool/package.json':
      '{"name":"tool","version":"1.0.0","bin":{"tool":"bin/tool.js"},"dependencies":{"lib":"file:../lib"}}\n',
    'pkgs/tool/bin/tool.js':
      '#!/usr/bin/env node\nconsole.log(JSON.stringify({ lib: require.resolve("lib"), nodePath: process.env.NODE_PATH }));\n',
    'pkgs/lib/package.json': '{"name":"lib","version":"1.0.0","main":"index.js"}\n',
    'pkgs/lib/index.js': 'module.exports = 1;\n',
  };
}

/** `pnpm install --offline` in `root`, with a store of its own under `store`. */
export function pnpmInstall(root: string, store: string): void {
  run(root, ['pnpm', 'install', '--offline', '--store-dir', store, '--config.confirmModulesPurge=false']);
}

/**
 * Every file under `dir` (not following links, `__pycache__` aside: compiled files carry their
 * source's path only for tracebacks, and Python corrects it on load) whose bytes, or whose link
 * target, contain `needle`. What the tests check with, independently of warren's own list.
 */
export function filesNaming(dir: string, needle: string): string[] {
  const found: string[] = [];
  const visit = (rel: string): void => {
    const full = path.join(dir, rel);
    const st = fs.lstatSync(full);
    if (st.isSymbolicLink()) {
      if (fs.readlinkSync(full).includes(needle)) found.push(rel);
    } else if (st.isDirectory()) {
      for (const name of fs.readdirSync(full)) if (name !== '__pycache__') visit(rel === '' ? name : `${rel}/${name}`);
    } else if (st.isFile() && fs.readFileSync(full).includes(needle)) {
      found.push(rel);
    }
  };
  visit('');
  return found;
}

/** Where a test's yarn keeps its cache and global state: its own folders, never the user's. */
export interface YarnDirs {
  cache: string;
  home: string;
}

/** `node BIN ARGS` in `cwd`; throws with what it printed (yarn berry reports its errors on stdout). */
function runNode(cwd: string, argv: string[], env: Record<string, string>): void {
  const r = spawnSync(process.execPath, argv, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  if (r.status !== 0)
    throw new Error(
      `yarn ${argv.slice(1).join(' ')} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}):\n${r.stdout}${r.stderr}`,
    );
}

/**
 * Real yarn classic (`node BIN ARGS`, BIN the `yarn` package's) in `cwd`, offline, with its
 * cache in `dirs.cache` and HOME in `dirs.home` (where it would write `.yarnrc`).
 */
export function yarnClassic(bin: string, cwd: string, dirs: YarnDirs, ...args: string[]): void {
  runNode(cwd, [bin, ...args, '--offline', '--non-interactive', '--no-progress', `--cache-folder=${dirs.cache}`], {
    HOME: dirs.home,
    YARN_DISABLE_SELF_UPDATE_CHECK: 'true',
  });
}

/**
 * Real yarn berry (`node BIN ARGS`, BIN `@yarnpkg/cli-dist`'s) in `cwd` with the network off,
 * its cache in `dirs.cache` (not the global one) and its global folder under `dirs.home`. The
 * project's own `.yarnrc.yml` says `nodeLinker: node-modules`.
 */
export function yarnBerry(bin: string, cwd: string, dirs: YarnDirs, ...args: string[]): void {
  runNode(cwd, [bin, ...args], {
    HOME: dirs.home,
    YARN_CACHE_FOLDER: dirs.cache,
    YARN_ENABLE_GLOBAL_CACHE: 'false',
    YARN_GLOBAL_FOLDER: path.join(dirs.home, 'berry'),
    YARN_ENABLE_NETWORK: 'false',
    YARN_ENABLE_TELEMETRY: 'false',
    YARN_ENABLE_PROGRESS_BARS: 'false',
    YARN_ENABLE_IMMUTABLE_INSTALLS: 'false',
  });
}
