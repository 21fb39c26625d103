import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../src/composition.js';
import type { ServiceFact } from '../src/services/facts.js';
import { unavailable } from './helpers/capabilities.js';
import { NOBODY, shellAsNobody } from './helpers/nobody.js';
import { pidsWithEnv } from './helpers/procs.js';
import { makeRepo } from './helpers/repo.js';
import { cluster, stopServicesAfter } from './helpers/services.js';

/**
 * Another user of this machine is hostile input: WARREN_HOME holds every task's service
 * passwords, so that user can neither list nor read it, and no password of a task's services is
 * on a command line (which /proc shows to everyone) — of the wrapper, the init or the server.
 */

const noNobody = unavailable(import.meta.filename, 'nobody');
const noRedis = noNobody ?? unavailable(import.meta.filename, 'redis');
const noPostgres = unavailable(import.meta.filename, 'postgres');

const mode = (file: string): string => (fs.statSync(file).mode & 0o777).toString(8).padStart(4, '0');

/** The command lines of every process, as uid 65534 reads them: pid, then the arguments joined by spaces. */
function commandLinesAsNobody(): string {
  const r = shellAsNobody(
    '/',
    `for f in /proc/[0-9]*/cmdline; do p=\${f#/proc/}; printf '%s %s\\n' "\${p%/cmdline}" "$(tr '\\000\\n' '  ' < "$f" 2>/dev/null)"; done`,
  );
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** `pids` and every process below them. */
function withDescendants(pids: number[]): number[] {
  const all = new Set(pids);
  for (const pid of all) {
    for (const thread of fs.readdirSync(`/proc/${pid}/task`, { withFileTypes: true })) {
      const children = fs.readFileSync(`/proc/${pid}/task/${thread.name}/children`, 'utf8').trim();
      for (const child of children === '' ? [] : children.split(' ')) all.add(Number(child));
    }
  }
  return [...all];
}

describe.skipIf(noRedis)('another local user (uid 65534) reads no secret of a task', () => {
  it("cannot list WARREN_HOME nor open state.db, and no service's password is on any command line", async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# app\n',
        'warren.yaml': `services:\n  cache: { kind: redis }\n${noPostgres ? '' : '  db: { kind: postgres }\n'}`,
      },
    });
    stopServicesAfter(repo.home);
    // Everything above WARREN_HOME lets others through (as ~ usually does): only its own modes keep them out.
    fs.chmodSync(path.dirname(repo.home), 0o755);
    const made = await repo.warren('new', 'feat', 'a');
    expect(made.code, made.stderr).toBe(0);

    const store = openStore(repo.home);
    const facts = store.listTasks()[0]?.data.services as Record<string, ServiceFact> | undefined;
    store.close();
    const cache = facts?.cache;
    if (cache?.kind !== 'redis') throw new Error(`no redis fact: ${JSON.stringify(facts)}`);
    const secrets = [cache.password];
    const db = facts?.db;
    if (db?.kind === 'postgres') secrets.push(db.password, cluster(repo.home).password);

    // The folder, and the database (with its WAL and shared memory), are the user's alone.
    expect(mode(repo.home)).toBe('0700');
    for (const f of ['state.db', 'state.db-wal', 'state.db-shm'].map((n) => path.join(repo.home, n)))
      if (fs.existsSync(f)) expect(mode(f), f).toBe('0600');
    const ls = shellAsNobody('/', `ls -a ${repo.home}`);
    expect(ls.code, `uid ${NOBODY} listed WARREN_HOME: ${ls.stdout}`).not.toBe(0);
    const read = shellAsNobody('/', `head -c 16 ${path.join(repo.home, 'state.db')} | od -c`);
    expect(read.stderr).toMatch(/Permission denied/);
    expect(read.stdout).not.toMatch(/SQLite/);

    // The service's processes (wrapper, init, redis-server): uid 65534 reads their command lines, and no password in any.
    const dir = fs
      .readdirSync(path.join(repo.home, 'services'))
      .map((key) => path.join(repo.home, 'services', key, 'a', 'cache'))
      .find((d) => fs.existsSync(d));
    expect(dir).toBeDefined();
    // redis-server writes its title over its environment: it is found as the init's child.
    const pids = withDescendants(pidsWithEnv('WARREN_DAEMON', dir ?? ''));
    expect(pids.length).toBeGreaterThanOrEqual(3);
    const lines = commandLinesAsNobody();
    const seen = new Map(lines.split('\n').map((l) => [Number(l.split(' ')[0]), l.slice(l.indexOf(' ') + 1)]));
    for (const pid of pids) expect(seen.get(pid) ?? '', `pid ${pid}'s command line, as uid ${NOBODY}`).not.toBe('');
    expect(
      pids.some((pid) => seen.get(pid)?.includes('redis-server')),
      JSON.stringify(pids.map((p) => seen.get(p))),
    ).toBe(true);
    for (const secret of secrets) {
      const holding = lines.split('\n').filter((l) => l.includes(secret));
      expect(holding, 'command lines holding a password').toEqual([]);
    }

    // redis took its password from its file (0600, beside its data in its own folder): without it, refused; with it, served.
    expect(mode(path.join(dir ?? '', 'data', 'redis.conf'))).toBe('0600');
    const port = String(cache.port);
    expect(spawnSync('redis-cli', ['-p', port, 'PING'], { encoding: 'utf8' }).stdout).toMatch(/NOAUTH/);
    const ping = await repo.warren('exec', 'a', '--', 'sh', '-c', 'redis-cli --no-auth-warning -u "$REDIS_URL" PING');
    expect(ping.stdout.trim()).toBe('PONG');
    expect((await repo.warren('rm', 'a')).code).toBe(0);
  }, 120_000);
});

describe('a WARREN_HOME others can read', () => {
  it('is made private on first use, saying so once (a line and an event); another user’s is left as it is', async () => {
    const repo = makeRepo();
    expect((await repo.warren('new', 'feat', 'a')).code).toBe(0);
    // As an older warren left it: the umask's modes.
    fs.chmodSync(repo.home, 0o755);
    fs.chmodSync(path.join(repo.home, 'state.db'), 0o644);
    fs.writeFileSync(path.join(repo.home, 'config.yaml'), 'editor: [code]\n', { mode: 0o644 });
    fs.chmodSync(path.join(repo.home, 'config.yaml'), 0o644);

    const first = await repo.warren('list');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`warren: warn: WARREN_HOME ${repo.home} could be read by other users`);
    expect(first.stderr).toMatch(/\(\S+ 0755 → 0700, state\.db 0644 → 0600, config\.yaml 0644 → 0600\)/);
    expect(mode(repo.home)).toBe('0700');
    expect(mode(path.join(repo.home, 'state.db'))).toBe('0600');
    expect(mode(path.join(repo.home, 'config.yaml'))).toBe('0600');
    const again = await repo.warren('list');
    expect(again.stderr).toBe('');

    const store = openStore(repo.home);
    const events = store.db
      .prepare("SELECT project, level, data FROM events WHERE kind = 'home.made_private'")
      .all() as { project: string | null; level: string; data: string }[];
    store.close();
    expect(events).toHaveLength(1);
    expect(events[0]?.project).toBeNull();
    expect(events[0]?.level).toBe('warn');
    expect((JSON.parse(events[0]?.data ?? '{}') as { changed: unknown[] }).changed).toContainEqual({
      path: repo.home,
      was: '0755',
      now: '0700',
    });
  });

  it.skipIf(noNobody)(
    "leaves another user's WARREN_HOME as it is (the command line refuses it: HOME_NOT_OWNED)",
    async () => {
      const repo = makeRepo();
      expect((await repo.warren('list')).code).toBe(0);
      fs.chmodSync(repo.home, 0o755);
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, repo.home]);
      const refused = await repo.warrenJson<{ error: { code: string } }>('list');
      expect(refused.json.error.code).toBe('HOME_NOT_OWNED');
      // The library opens it (root may), and changes nothing of its owner's.
      openStore(repo.home).close();
      expect(mode(repo.home)).toBe('0755');
    },
  );
});
