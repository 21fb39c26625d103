import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { allocatePorts, portRange, precheckPorts } from '../../src/run/ports.js';
import { openStore } from '../../src/composition.js';
import { unavailable } from '../helpers/capabilities.js';
import { makeRepo, runWarren } from '../helpers/repo.js';
import { startCli, waitForFile } from '../helpers/procs.js';

/** Per-task port blocks from the registry in the database, and the audit of listening ports. */

type Made = { code: number; json: { ports: { first: number; count: number } } };

function blockOf(made: Made): number[] {
  return Array.from({ length: made.json.ports.count }, (_, i) => made.json.ports.first + i);
}

function portRows(home: string): { port: number; task_id: string; project: string }[] {
  const db = new Database(path.join(home, 'state.db'), { readonly: true });
  try {
    return db.prepare('SELECT port, task_id, project FROM ports ORDER BY port').all() as {
      port: number;
      task_id: string;
      project: string;
    }[];
  } finally {
    db.close();
  }
}

describe('port blocks', () => {
  it('two projects in one WARREN_HOME get disjoint blocks; rm releases them; the env carries them', async () => {
    const a = makeRepo({ name: 'a' });
    // A second repository sharing A's WARREN_HOME: blocks are unique machine-wide, not per project.
    const b = makeRepo({ name: 'b', files: { 'README.md': '# b\n', 'warren.yaml': 'ports: { count: 3 }\n' } });
    const inB = (...args: string[]) => runWarren(['--json', ...args], { cwd: b.root, home: a.home });
    const madeA = (await a.warrenJson('new', 'feat', 'same')) as unknown as Made;
    const madeB = JSON.parse((await inB('new', 'feat', 'same')).stdout) as Made['json'];
    expect(madeA.json.ports.count).toBe(10);
    expect(madeB.ports.count).toBe(3);
    const portsA = new Set(blockOf(madeA));
    expect(blockOf({ code: 0, json: madeB }).some((p) => portsA.has(p))).toBe(false);

    const env = await a.warrenJson<{ log: string }>(
      'exec',
      'same',
      '--',
      'sh',
      '-c',
      'echo "$WARREN_PORT|$PORT|$WARREN_PORTS|$WARREN_DB_NAME"',
    );
    const line = fs.readFileSync(env.json.log, 'utf8').trim();
    const [port, port2, list, dbName] = line.split('|');
    expect(Number(port)).toBe(madeA.json.ports.first);
    expect(port2).toBe(port);
    expect(list?.split(',').map(Number)).toEqual(blockOf(madeA));
    expect(dbName).toMatch(/^warren_same_[0-9a-f]{10}$/);
    const envB = JSON.parse((await inB('exec', 'same', '--', 'sh', '-c', 'echo $WARREN_DB_NAME')).stdout) as {
      log: string;
    };
    expect(fs.readFileSync(envB.log, 'utf8').trim()).not.toBe(dbName);

    expect(portRows(a.home)).toHaveLength(13);
    expect((await a.warren('rm', 'same')).code).toBe(0);
    const left = portRows(a.home);
    expect(left).toHaveLength(3);
    expect(new Set(left.map((r) => r.project)).size).toBe(1);
    // The released block is handed out again.
    const again = (await a.warrenJson('new', 'feat', 'next')) as unknown as Made;
    expect(again.json.ports.first).toBe(madeA.json.ports.first);
  });

  it('a port already in use by something else is never handed out', async () => {
    const repo = makeRepo();
    const server = net.createServer();
    // Occupy the first port of the range (or whichever is free first): allocation must skip it.
    const busy = await new Promise<number>((resolve, reject) => {
      const tryPort = (p: number): void => {
        server.once('error', () => tryPort(p + 1));
        server.listen({ port: p, host: '127.0.0.1', exclusive: true }, () => resolve(p));
      };
      server.on('error', reject);
      tryPort(portRange().first);
    });
    try {
      const made = (await repo.warrenJson('new', 'feat', 'busy')) as unknown as Made;
      expect(made.code).toBe(0);
      expect(blockOf(made)).not.toContain(busy);
      const shown = await repo.warrenJson<{ events: { kind: string; level: string }[] }>('show', 'busy');
      expect(shown.json.events.some((e) => e.kind === 'ports.allocated')).toBe(true);
    } finally {
      server.close();
    }
  });

  it('a check made while the worktree is made is used for the block it checked, once; another block is checked afresh', async () => {
    const repo = makeRepo();
    const store = openStore(repo.home);
    const listens = vi.spyOn(net.Server.prototype, 'listen');
    try {
      store.upsertProject('p', repo.root, path.join(repo.root, '.git'));
      const task = (id: string) =>
        store.insertTask({
          project: 'p',
          id,
          type: 'feat',
          branch: `feat/${id}`,
          path: path.join(repo.root, id),
          base: 'main',
          baseCommit: '0'.repeat(40),
          state: 'ready',
          data: {},
        });
      for (const id of ['a', 'b', 'c', 'filler']) task(id);
      // Start the blocks at a random place in this worker's range, away from the ports its other tests' tasks use.
      const range = portRange();
      const offset = Math.floor((range.last - range.first) / 3 + Math.random() * ((range.last - range.first) / 3));
      const fill = store.db.prepare(
        "INSERT INTO ports (port, project, task_id, allocated_at) VALUES (?, 'p', 'filler', '')",
      );
      store.db.transaction(() => {
        for (let port = range.first; port < range.first + offset; port++) fill.run(port);
      })();

      const ahead = await precheckPorts(store, 10);
      expect(ahead?.free).toHaveLength(10);
      listens.mockClear();
      const a = await allocatePorts(store, 'p', 'a', 10, ahead);
      // Nothing took those ports meanwhile: the block checked is reserved without binding its ports again.
      expect(ahead?.free.every(Boolean)).toBe(true);
      expect(a.block).toEqual(ahead?.block);
      expect(listens).not.toHaveBeenCalled();

      // Checked, then taken by another task before this one reserves: the next block is checked for real.
      const stale = await precheckPorts(store, 10);
      await allocatePorts(store, 'p', 'b', 10);
      listens.mockClear();
      const c = await allocatePorts(store, 'p', 'c', 10, stale);
      expect(c.block.first).not.toBe(stale?.block.first);
      expect(listens.mock.calls.length).toBeGreaterThanOrEqual(10);
    } finally {
      listens.mockRestore();
      store.close();
    }
  });

  it('WARREN_PORT_RANGE: blocks come from it, its end is said when it is full, and a value that is not a range is refused before anything is made', async () => {
    const repo = makeRepo();
    const range = portRange();
    const narrow = `${range.last - 19}-${range.last}`;
    const cli = (env: string, ...args: string[]) =>
      runWarren(['--json', ...args], { cwd: repo.root, home: repo.home, env: { WARREN_PORT_RANGE: env } });
    const first = JSON.parse((await cli(narrow, 'new', 'feat', 'n1')).stdout) as Made['json'];
    const second = JSON.parse((await cli(narrow, 'new', 'feat', 'n2')).stdout) as Made['json'];
    expect([first.ports.first, second.ports.first].sort()).toEqual([range.last - 19, range.last - 9]);
    const full = await cli(narrow, 'new', 'feat', 'n3');
    expect(full.code).toBe(1);
    // Found once the task's worktree was being made: that new is undone, and says why.
    expect(JSON.parse(full.stdout).error.message).toContain(`no block of 10 free ports is left in ${narrow}`);
    for (const bad of ['20000', '30000-20000', '80-90', 'a-b']) {
      const r = await cli(bad, 'new', 'feat', 'x');
      expect(r.code, bad).toBe(2);
      expect(JSON.parse(r.stdout).error.message).toContain(`WARREN_PORT_RANGE=${JSON.stringify(bad)} is not a range`);
    }
    expect(repo.git('branch', '--list', 'feat/x')).toBe('');
    expect(repo.git('branch', '--list', 'feat/n3')).toBe('');
    expect(
      portRows(repo.home)
        .map((r) => r.task_id)
        .sort(),
    ).toEqual([...Array(10).fill('n1'), ...Array(10).fill('n2')]);
  });

  it('12 concurrent `warren new` get 12 disjoint blocks', async () => {
    const repo = makeRepo();
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    const results = await Promise.all(ids.map((id) => repo.warrenJson('new', 'feat', id, '--no-sync')));
    for (const r of results) expect(r.code, r.stdout + r.stderr).toBe(0);
    const all = results.flatMap((r) => blockOf(r as unknown as Made));
    expect(all).toHaveLength(120);
    expect(new Set(all).size).toBe(120);
    expect(portRows(repo.home)).toHaveLength(120);
  });
});

describe('audit: ports', () => {
  const noBwrap = unavailable(import.meta.filename, 'bwrap');
  it.for(['none', 'bwrap'])(
    "sandbox %s: lists the ports the task's processes listen on and flags the ones outside its block",
    async (sandbox, { skip }) => {
      skip(sandbox === 'bwrap' && noBwrap !== null, noBwrap ?? undefined);
      const repo = makeRepo({ files: { 'README.md': '# t\n', 'warren.yaml': `sandbox: ${sandbox}\n` } });
      const made = (await repo.warrenJson('new', 'feat', 'srv')) as unknown as Made & { json: { path: string } };
      // Written in the workspace: the one place a sandboxed command may write.
      const ready = path.join(made.json.path, 'ready');
      // One server on the task's port, one on a port the OS picks (outside the block).
      const script = `
      const net = require('node:net');
      const fs = require('node:fs');
      const a = net.createServer().listen(Number(process.env.WARREN_PORT), '127.0.0.1', () => {
        const b = net.createServer().listen(0, '127.0.0.1', () => fs.writeFileSync('ready', String(b.address().port)));
      });`;
      const run = startCli(['exec', 'srv', '--timeout', '20s', '--', process.execPath, '-e', script], {
        cwd: repo.root,
        home: repo.home,
      });
      try {
        await waitForFile(ready, undefined, run);
        // The file may exist before its content is written.
        let stray = 0;
        while (!stray) stray = Number(fs.readFileSync(ready, 'utf8')) || 0;
        const { openProject } = await import('../../src/composition.js');
        const store = openStore(repo.home);
        try {
          const ctx = await openProject(repo.root, { store });
          const task = store.getTask(ctx.key, 'srv');
          const section = ctx.lifecycle.audit.find((s) => s.name === 'ports');
          expect(section).toBeDefined();
          if (!section || !task) return;
          const report = (await section.collect(ctx, task)) as {
            data: { listening: { port: number; inBlock: boolean }[]; outside: { port: number }[] };
            lines: string[];
          };
          const ports = report.data.listening.map((l) => [l.port, l.inBlock]);
          expect(ports).toContainEqual([made.json.ports.first, true]);
          expect(ports).toContainEqual([stray, false]);
          expect(report.data.outside.map((o) => o.port)).toEqual([stray]);
          expect(report.lines.join('\n')).toContain(`OUTSIDE 127.0.0.1:${stray}`);
        } finally {
          store.close();
        }
      } finally {
        run.child.kill('SIGTERM');
        await run.done;
      }
    },
  );
});
