// What the dashboard's first screen costs: GET /api/fleet for a repository of 20 tasks, each
// with a provisioned node_modules (BENCH_FLEET_FILES files, mode BENCH_FLEET_MODE, default copy),
// an uncommitted edit, and for half of them a commit. The goal: the fleet answers in 500 ms or
// less. Against the same request to the build of BENCH_BEFORE (default: the last commit before
// the fleet read its slow parts apart; `none` leaves it out), measured in the same rounds, and
// against GET /api/meta (a request that reads nothing: the HTTP floor). Also timed: what the
// page fills in afterwards (GET /api/fleet/details: change counts, provisioned changes, strays),
// and 20 × `git status` run one after another (what reading each workspace costs at least).
import fs from 'node:fs';
import path from 'node:path';
import { buildRevision } from './core.js';
import { BIN, machine, makeRepo, median, run, sh, startServe, time, tmp } from './lib.js';

const TASKS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const FILES = Number(process.env.BENCH_FLEET_FILES ?? 3000);
const MODE = process.env.BENCH_FLEET_MODE ?? 'copy';
const BEFORE = process.env.BENCH_BEFORE ?? 'd87592556fa9f3fb628f4c38366a88ae17d1ad42';
const GOAL_MS = 500;

/** An installed-looking node_modules: packages of ten files each, a package.json in every one. */
function nodeModules(root, files) {
  for (let i = 0; i < files; i++) {
    const pkg = path.join(root, 'node_modules', `pkg-${Math.floor(i / 10)}`);
    if (i % 10 === 0) {
      fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
      fs.writeFileSync(path.join(pkg, 'package.json'), `{"name":"pkg-${i / 10}","version":"1.0.0"}\n`);
    } else fs.writeFileSync(path.join(pkg, 'lib', `f${i}.js`), `module.exports = ${i};\n`);
  }
}

async function get(server, url) {
  const res = await fetch(`${server.url}${url}`, { headers: { 'x-warren-token': server.token } });
  const body = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${body.slice(0, 300)}`);
  return body;
}

export async function benchFleet() {
  const base = tmp('warren-bench-fleet-');
  const repo = makeRepo(path.join(base, 'repo'));
  fs.writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
  fs.writeFileSync(path.join(repo, 'warren.yaml'), `provision:\n  - { path: node_modules, mode: ${MODE} }\n`);
  sh('git', ['add', '-A'], { cwd: repo });
  sh('git', ['commit', '-q', '-m', 'provision node_modules'], { cwd: repo });
  nodeModules(repo, FILES);
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };

  const builds = [{ label: 'now', bin: BIN }];
  const before = buildRevision(BEFORE, path.join(base, 'before'));
  if (before) builds.push(before);

  // The tasks, made through the dashboard as a user of it would.
  const maker = await startServe(repo, env);
  const workspaces = [];
  for (let i = 0; i < TASKS; i++) {
    const res = await fetch(`${maker.url}api/actions/new`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-warren-token': maker.token },
      body: JSON.stringify({ project: maker.project, options: { type: 'feat', id: `t-${i}`, skipSync: true } }),
    });
    const body = await res.json();
    if (!res.ok) throw new Error(`new t-${i}: ${JSON.stringify(body)}`);
    const ws = body.result.path;
    workspaces.push(ws);
    fs.appendFileSync(path.join(ws, 'src', 'd0', 'f0.txt'), `task ${i}\n`);
    if (i % 2 === 0) {
      sh('git', ['commit', '-q', '-am', `work of t-${i}`], { cwd: ws });
      fs.writeFileSync(path.join(ws, `notes-${i}.md`), 'uncommitted\n');
    }
  }
  await maker.stop();

  const rows = new Map();
  const record = (name, ms) => rows.set(name, [...(rows.get(name) ?? []), ms]);
  const servers = [];
  for (const b of builds) servers.push({ ...b, server: await startServe(repo, env, b.bin) });
  const detailsOf = new Map();
  for (const s of servers) {
    const first = await time(() => get(s.server, 'api/fleet'));
    record(`GET /api/fleet, first read (${s.label})`, first.ms);
    const tasks = JSON.parse(first.result).projects[0].tasks.length;
    if (tasks !== TASKS) throw new Error(`${s.label}: the fleet lists ${tasks} tasks, not ${TASKS}`);
    // The details endpoint is new with this benchmark: an earlier build answers 404.
    const probe = await fetch(`${s.server.url}api/fleet/details`, { headers: { 'x-warren-token': s.server.token } });
    await probe.text();
    detailsOf.set(s.label, probe.ok);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) {
      record(`GET /api/meta (${s.label})`, (await time(() => get(s.server, 'api/meta'))).ms);
      record(`GET /api/fleet (${s.label})`, (await time(() => get(s.server, 'api/fleet'))).ms);
      if (detailsOf.get(s.label))
        record(`GET /api/fleet/details (${s.label})`, (await time(() => get(s.server, 'api/fleet/details'))).ms);
    }
    record(
      `${TASKS} × git status, one after another`,
      (
        await time(async () => {
          for (const ws of workspaces) await run('git', ['status', '--porcelain'], { cwd: ws });
        })
      ).ms,
    );
  }
  for (const s of servers) await s.server.stop();

  const floor = median(rows.get('GET /api/meta (now)'));
  console.log(
    `\n${TASKS} tasks, each with a node_modules of ${FILES} files (${MODE}), an edit, half with a commit: median of ${ROUNDS} (${machine()}, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]})`,
  );
  console.log(`${'case'.padEnd(52)} ${'median'.padStart(10)} ${'× /api/meta'.padStart(12)}`);
  const order = [
    ...servers.flatMap((s) =>
      ['GET /api/meta', 'GET /api/fleet, first read', 'GET /api/fleet', 'GET /api/fleet/details'].map(
        (what) => `${what} (${s.label})`,
      ),
    ),
    `${TASKS} × git status, one after another`,
  ];
  for (const name of order.filter((n) => rows.has(n))) {
    const m = median(rows.get(name));
    const goal = name === 'GET /api/fleet (now)' ? `  goal ≤ ${GOAL_MS} ms: ${m <= GOAL_MS ? 'met' : 'missed'}` : '';
    console.log(
      `${name.padEnd(52)} ${`${m.toFixed(1)} ms`.padStart(10)} ${(m / floor).toFixed(1).padStart(12)}${goal}`,
    );
  }
  const now = median(rows.get('GET /api/fleet (now)'));
  console.log(`GET /api/fleet for ${TASKS} tasks: ${now.toFixed(0)} ms (goal ≤ ${GOAL_MS} ms)`);
  if (before) {
    const then = median(rows.get(`GET /api/fleet (${before.label})`));
    console.log(`against ${then.toFixed(0)} ms at ${before.label}: ${(now / then).toFixed(3)}×`);
  }
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 3 });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFleet();
