import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers, checked on the source: which folder may import which, and the one seam for each
 * side effect. A new import that goes the wrong way fails here, naming the file.
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

function importsOf(file: string): Import[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: Import[] = [];
  const from = path.relative(SRC, file);
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)'/gm)) {
    const spec = m[3] ?? '';
    const to = spec.startsWith('.')
      ? path.relative(SRC, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts')
      : spec;
    out.push({ from, to, typeOnly: m[2] !== undefined });
  }
  for (const m of text.matchAll(/await import\('([^']+)'\)/g)) {
    const spec = m[1] ?? '';
    out.push({
      from,
      to: spec.startsWith('.')
        ? path.relative(SRC, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts')
        : spec,
      typeOnly: false,
    });
  }
  return out;
}

const ALL = sources().flatMap(importsOf);
const layer = (p: string): string => p.split(path.sep)[0] ?? p;

/** The bottom of the stack: they know nothing of workspaces or features (types aside, for the typed schemas). */
const BOTTOM = ['util', 'system', 'git', 'state', 'errors.ts', 'error-docs.ts', 'config'];
const ABOVE = ['workspace', 'checkout', 'provision', 'run', 'land', 'audit', 'web', 'cli', 'lifecycle.ts', 'index.ts'];

describe('architecture', () => {
  it('only src/git spawns git: nothing else imports its seam', () => {
    const bad = ALL.filter((i) => i.to === path.join('git', 'exec.ts') && layer(i.from) !== 'git' && !i.typeOnly);
    expect(bad.map((i) => i.from)).toEqual([]);
  });

  it('only the spawn primitive starts processes', () => {
    const bad = ALL.filter(
      (i) => (i.to === 'node:child_process' || i.to === 'child_process') && i.from !== path.join('system', 'spawn.ts'),
    );
    expect(bad.map((i) => i.from)).toEqual([]);
  });

  it('the bottom layers import nothing from above them (at run time)', () => {
    const bad = ALL.filter((i) => BOTTOM.includes(layer(i.from)) && ABOVE.includes(layer(i.to)) && !i.typeOnly);
    expect(bad.map((i) => `${i.from} → ${i.to}`)).toEqual([]);
  });

  it('the workspace core imports no feature: features come in through the lifecycle', () => {
    const features = ['checkout', 'provision', 'run', 'land', 'audit', 'web', 'cli', 'lifecycle.ts'];
    const bad = ALL.filter((i) => layer(i.from) === 'workspace' && features.includes(layer(i.to)) && !i.typeOnly);
    expect(bad.map((i) => `${i.from} → ${i.to}`)).toEqual([]);
  });

  it('the dashboard reads git and the disk through the library, never by itself', () => {
    const bad = ALL.filter(
      (i) =>
        layer(i.from) === 'web' && (layer(i.to) === 'git' || i.to === path.join('system', 'spawn.ts')) && !i.typeOnly,
    );
    expect(bad.map((i) => `${i.from} → ${i.to}`)).toEqual([]);
  });

  it('library code never writes to the terminal; the CLI does', () => {
    const bad = sources()
      .filter((f) => layer(path.relative(SRC, f)) !== 'cli')
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
});
