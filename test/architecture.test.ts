import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEATURES, LIFECYCLE } from '../src/composition.js';

/**
 * The layers, checked on the source: which folder may import which — type-only imports
 * counted, since a type names its module as surely as a value does — and the one seam for each
 * side effect. A new import that goes the wrong way fails here, naming the file; so does a new
 * folder nobody placed in a layer.
 */

const SRC = path.resolve(import.meta.dirname, '../src');

interface Import {
  from: string;
  /** Resolved, relative to src/ (`git/exec.ts`), or the bare specifier (`node:child_process`). */
  to: string;
  typeOnly: boolean;
}

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sources(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

function resolved(file: string, spec: string): string {
  return spec.startsWith('.')
    ? path.relative(SRC, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts')
    : spec;
}

/** Every import and re-export of `file`, static or dynamic, over as many lines as it takes. */
function importsOf(file: string): Import[] {
  const text = fs.readFileSync(file, 'utf8');
  const from = path.relative(SRC, file);
  const out: Import[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm)) {
    out.push({ from, to: resolved(file, m[2] ?? ''), typeOnly: m[1] !== undefined });
  }
  for (const m of text.matchAll(/import\('([^']+)'\)/g))
    out.push({ from, to: resolved(file, m[1] ?? ''), typeOnly: false });
  return out;
}

const ALL = sources().flatMap(importsOf);

/** Every `import { a, b as c }` of src/, by the file that makes it (relative to src/, with `/`) and the names it imports. */
function namedImports(): { from: string; names: string[] }[] {
  return sources().flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'[^']+'/gm)].map((m) => ({
      from: path.relative(SRC, file).split(path.sep).join('/'),
      names: (m[1] ?? '')
        .split(',')
        .map(
          (n) =>
            n
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0] ?? '',
        )
        .filter((n) => n !== ''),
    })),
  );
}
const top = (p: string): string => p.split(path.sep)[0] ?? p;

/**
 * Each folder (or file) of src/, by layer: an import may go to its own layer or one below, never
 * up. The features sit side by side, and one uses another only along an edge of FEATURE_EDGES.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['util', 'errors.ts', 'error-docs.ts', 'error-docs-tasks.ts', 'error-docs-system.ts'],
  ['system'],
  ['git', 'state', 'config'],
  // The workspace core: create, remove, scan, gc, locks, the operation runner; which of warren.yaml's commands are trusted.
  ['workspace', 'trust'],
  // The features: one imports another only as FEATURE_EDGES allows.
  ['provision', 'checkout', 'run', 'land', 'review', 'audit', 'services', 'conflicts'],
  // The merge queue, built of landing, provisioning and execution.
  ['queue'],
  // The answers and error documents every front end gives, shaped once.
  ['views'],
  // What composes the features, and what people and programs call.
  ['composition.ts', 'index.ts', 'web', 'mcp', 'cli'],
];

/**
 * Which feature may import which, and why: every other import between two features fails, and
 * the table itself has no cycle. What two features both need goes below them (system/, config/,
 * trust/); what a feature gives every process of a task (a service's variables and port) it
 * hands the runner through the lifecycle (`reach`), not by being imported.
 */
const FEATURE_EDGES: Record<string, readonly string[]> = {
  provision: [],
  // Execution reads what was provisioned: the modes' records (what a sandbox must let it write), an install's facts.
  run: ['provision'],
  // A cow checkout asks provisioning's overlay probe.
  checkout: ['provision'],
  // A land compares lockfiles with snapshots, and runs commit hooks through the runner.
  land: ['provision', 'run'],
  // A review is sent to the agent through the runner.
  review: ['run'],
  // Services start their processes through the runner seam: run is the seam, services its user.
  services: ['run'],
  audit: ['land'],
  // `warren sync` checkpoints and reads what was provisioned through landing.
  conflicts: ['land'],
};

/** A cycle in `edges` as `a → b → a`, or null. */
function cycleIn(edges: Record<string, readonly string[]>): string | null {
  const done = new Set<string>();
  const visit = (node: string, trail: string[]): string | null => {
    if (trail.includes(node)) return [...trail.slice(trail.indexOf(node)), node].join(' → ');
    if (done.has(node)) return null;
    for (const next of edges[node] ?? []) {
      const found = visit(next, [...trail, node]);
      if (found) return found;
    }
    done.add(node);
    return null;
  };
  for (const node of Object.keys(edges)) {
    const found = visit(node, []);
    if (found) return found;
  }
  return null;
}

function rank(entry: string): number {
  return LAYERS.findIndex((layer) => layer.includes(entry));
}

describe('architecture', () => {
  it('every folder and file of src/ has a layer', () => {
    const unplaced = fs.readdirSync(SRC).filter((entry) => rank(entry) === -1);
    expect(unplaced).toEqual([]);
  });

  it('no import goes up a layer, type-only imports included', () => {
    const bad = ALL.filter((i) => !i.to.startsWith('node:') && rank(top(i.to)) !== -1)
      .filter((i) => rank(top(i.to)) > rank(top(i.from)))
      .map((i) => `${i.from} → ${i.to}${i.typeOnly ? ' (type)' : ''}`);
    expect(bad).toEqual([]);
  });

  it('a feature imports another only along a declared edge, and the edges make no loop', () => {
    const features = LAYERS[4] ?? [];
    expect(Object.keys(FEATURE_EDGES).sort()).toEqual([...features].sort());
    const bad = ALL.filter((i) => features.includes(top(i.from)) && features.includes(top(i.to)))
      .filter((i) => top(i.from) !== top(i.to) && !(FEATURE_EDGES[top(i.from)] ?? []).includes(top(i.to)))
      .map((i) => `${i.from} → ${i.to}${i.typeOnly ? ' (type)' : ''}`);
    expect(bad).toEqual([]);
    expect(cycleIn(FEATURE_EDGES)).toBeNull();
    expect(cycleIn({ a: ['b'], b: ['c'], c: ['a'] })).toBe('a → b → c → a');
  });

  it('every step a feature declares is placed in the lifecycle once, and the lifecycle holds nothing else', () => {
    // What each feature makes goes with what undoes it (the Feature type); where each runs is LIFECYCLE's.
    const declared = Object.values(FEATURES).flatMap((f) => [
      ...Object.values('create' in f ? f.create : {}),
      ...('checkout' in f ? [f.checkout] : []),
      ...('remove' in f ? [f.remove] : []),
      ...Object.values('gc' in f ? f.gc : {}),
      ...('beforeRun' in f ? [f.beforeRun] : []),
      ...('afterRun' in f ? [f.afterRun] : []),
      ...Object.values('audit' in f ? f.audit : {}),
      ...('reach' in f ? [f.reach] : []),
    ]);
    const placed = [
      ...LIFECYCLE.create,
      ...(LIFECYCLE.checkout ? [LIFECYCLE.checkout] : []),
      ...LIFECYCLE.remove,
      ...LIFECYCLE.gc,
      ...LIFECYCLE.beforeRun,
      ...(LIFECYCLE.afterRun ?? []),
      ...LIFECYCLE.audit,
      ...LIFECYCLE.reach,
    ];
    const name = (step: object): string => (step as { name?: string }).name ?? '?';
    expect(declared.filter((s) => placed.filter((p) => p === s).length !== 1).map(name)).toEqual([]);
    expect(placed.filter((p) => !declared.includes(p)).map(name)).toEqual([]);
  });

  it('state/ knows no one above it: only util and errors', () => {
    const bad = ALL.filter(
      (i) => top(i.from) === 'state' && i.to.includes('/') && !['state', 'util'].includes(top(i.to)),
    )
      .filter((i) => !i.to.startsWith('node:'))
      .map((i) => `${i.from} → ${i.to}`);
    expect(bad).toEqual([]);
  });

  it('only src/git spawns git: nothing else imports its seam', () => {
    const bad = ALL.filter((i) => i.to === path.join('git', 'exec.ts') && top(i.from) !== 'git' && !i.typeOnly);
    expect(bad.map((i) => i.from)).toEqual([]);
  });

  it('only the spawn primitive starts processes', () => {
    const bad = ALL.filter(
      (i) => (i.to === 'node:child_process' || i.to === 'child_process') && i.from !== path.join('system', 'spawn.ts'),
    );
    expect(bad.map((i) => i.from)).toEqual([]);
  });

  it('one runner starts every process of a task: nothing else supervises a run or starts a service', () => {
    // src/run/boundary.ts decides what a task's process may see and reach; the runner starts it
    // there: execute.ts (a bounded run: agent, exec, setup, verify, teardown, hooks, seeds) and
    // service-runner.ts (a service: a dev server, a redis, the gate's), with service-host.ts, the
    // service's host half. Anything else that started a task's process would bypass its sandbox.
    const RUNNER = ['run/execute.ts', 'run/service-runner.ts', 'run/service-host.ts'];
    const allowed: Record<string, readonly string[]> = {
      // A run's tree, held and ended: only a run of the runner.
      supervise: ['run/execute.ts'],
      // A daemon: a task's service through the runner, or warren's own PostgreSQL server (it runs
      // none of a task's code; the tasks' SQL runs in it as unprivileged roles).
      startDaemon: ['run/service-runner.ts', 'services/pg-server.ts'],
      // The spawn primitive's doors, each named with what it starts.
      startBounded: ['run/supervisor.ts', 'run/service-host.ts'],
      runBounded: [
        'git/exec.ts', // git, with no hook of a workspace's and no fsmonitor
        'system/tool.ts', // warren's own tools (cp, mount, psql with warren's SQL), argv of warren's
        'system/containment.ts', // the containment probe: `true` in a namespace
        'run/sandbox.ts', // `bwrap --version`
        'system/sandbox-uid.ts', // as root, the probe of idmapped mounts: `true` as the sandbox's uid
        'cli/pager.ts', // the user's own pager ($WARREN_PAGER, $PAGER, less) showing warren's output, on their terminal
        'run/container/podman.ts', // podman with warren's argv: an image, a task's container made or removed
        'run/ssh/connection.ts', // ssh with warren's argv: a host's connection made, checked, ended; a request to the host's warren
      ],
      spawnService: ['run/daemon.ts'],
      // warren's own queue processor; podman's API service (it runs no task's code: the task's commands are exec'd through it by the runner)
      spawnDetached: ['cli/commands/queue.ts', 'run/container/podman.ts'],
      launchDetached: ['workspace/editor.ts'], // the user's editor, from their own config.yaml
      // warren's own tools on warren's own files; nothing here runs a file of a workspace.
      runTool: [
        'system/overlay.ts',
        'provision/cow-support.ts',
        'provision/modes/copy.ts',
        'provision/modes/contain.ts',
        'checkout/snapshot.ts',
        'services/pg-server.ts', // initdb, pg_ctl: warren's cluster
        'services/pg-sql.ts', // pg_dump, and its dump loaded back by psql, as the task's own role (warren's own SQL goes over pg, in process)
      ],
    };
    const bad = namedImports()
      .flatMap((i) => i.names.map((name) => ({ ...i, name })))
      .filter(({ name, from }) => name in allowed && !(allowed[name] ?? []).includes(from))
      .map(({ name, from }) => `${from} imports ${name}`);
    expect(bad).toEqual([]);
    // The runner's own files exist where the table says.
    for (const file of RUNNER) expect(fs.existsSync(path.join(SRC, file)), file).toBe(true);
  });

  it('reads every named import: the runner table is not checked against nothing', () => {
    const names = namedImports();
    expect(names.some((i) => i.from === 'run/execute.ts' && i.names.includes('supervise'))).toBe(true);
    expect(names.some((i) => i.from === 'run/service-runner.ts' && i.names.includes('startDaemon'))).toBe(true);
  });

  it('the dashboard reads git and the disk through the library, never by itself', () => {
    const bad = ALL.filter(
      (i) => top(i.from) === 'web' && (top(i.to) === 'git' || i.to === path.join('system', 'spawn.ts')) && !i.typeOnly,
    );
    expect(bad.map((i) => `${i.from} → ${i.to}`)).toEqual([]);
  });

  it('library code never writes to the terminal; the CLI does', () => {
    const bad = sources()
      .filter((f) => top(path.relative(SRC, f)) !== 'cli')
      .filter((f) => /process\.(stdout|stderr)\b|console\.(log|warn|error)/.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(bad).toEqual([]);
  });

  it('no global registries filled by importing a module: nothing is imported for its side effects', () => {
    const bare = sources().flatMap((f) =>
      [...fs.readFileSync(f, 'utf8').matchAll(/^import\s+'([^']+)';/gm)].map(
        (m) => `${path.relative(SRC, f)} → ${m[1]}`,
      ),
    );
    expect(bare).toEqual([]);
  });

  it('removeTree is the only recursive delete: no rm({ recursive }), no `rm -r` argv', () => {
    // removeTree refuses `/`, a home, a relative path, a NUL and a path outside its root
    // (src/system/remove-guard.ts); a recursive delete beside it would skip those guards.
    const RECURSIVE = [
      /\b(?:rm|rmSync|rmdir|rmdirSync)\s*\([^;]*?\brecursive\s*:\s*true/s,
      // `rm` started as a process (a hint that prints `rm -r …` for a person is not one)
      /\b(?:runTool|runBounded|startBounded|spawn\w*)\s*\(\s*(?:\{\s*argv:\s*)?\[\s*'rm'\s*,/,
      /\bremoveSync\s*\(|from\s+'(?:rimraf|fs-extra)'/,
    ];
    const bad = sources()
      .map((f) => path.relative(SRC, f))
      .filter((f) => f !== path.join('system', 'remove-tree.ts'))
      .filter((f) => RECURSIVE.some((re) => re.test(fs.readFileSync(path.join(SRC, f), 'utf8'))));
    expect(bad).toEqual([]);
  });

  it('reads every import: the layer table is not checked against nothing', () => {
    // A regression guard for the reader above: multi-line and type-only imports are seen.
    expect(ALL.length).toBeGreaterThan(500);
    expect(ALL.some((i) => i.typeOnly && top(i.from) === 'state')).toBe(true);
    expect(
      ALL.some(
        (i) => i.from === path.join('workspace', 'create.ts') && i.to === path.join('workspace', 'operation.ts'),
      ),
    ).toBe(true);
  });
});
