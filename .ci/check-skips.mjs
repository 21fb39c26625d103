// Usage: node .ci/check-skips.mjs [--skips DIR] [--report FILE]
//
// After the tests, in .ci/run: fails when a test was skipped on a machine that could have run
// it. Two checks:
//   1. every recorded skip (DIR, default artifacts/skips: one JSON file per suite and capability,
//      written by test/helpers/capabilities.ts) is put to .ci/probe, which decides on its own
//      whether this machine has the capability; where it does, the skip was avoidable;
//   2. every test file with a skipped test in vitest's JSON report (FILE, default
//      artifacts/vitest.json; `--report none` leaves this out) recorded why.
// It does not import the tests' probes: an independent second opinion is the point.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
}
const skipsDir = path.resolve(option('--skips', path.join(root, 'artifacts/skips')));
const reportFile = option('--report', path.join(root, 'artifacts/vitest.json'));

const skips = fs.existsSync(skipsDir)
  ? fs
      .readdirSync(skipsDir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(fs.readFileSync(path.join(skipsDir, f), 'utf8')))
  : [];
const problems = [];

for (const s of skips) {
  for (const key of ['suite', 'capability', 'reason', 'install']) {
    if (typeof s[key] !== 'string' || s[key] === '')
      problems.push(`a skip record without "${key}": ${JSON.stringify(s)}`);
  }
}

// 1. Ask .ci/probe once per capability.
const verdicts = new Map();
for (const capability of new Set(skips.map((s) => s.capability))) {
  const r = spawnSync('bash', [path.join(here, 'probe'), capability], { encoding: 'utf8' });
  verdicts.set(capability, { status: r.status, why: r.stderr.trim().split('\n').pop() ?? '' });
}
for (const s of skips) {
  const v = verdicts.get(s.capability);
  if (v.status === 0) {
    problems.push(
      `[${s.suite}] skipped, saying "${s.reason}", but .ci/probe finds ${s.capability} on this machine: the tests' probe is wrong, or the skip is`,
    );
  } else if (v.status !== 1) {
    problems.push(
      `[${s.suite}] skipped for ${s.capability}, which .ci/probe cannot check (exit ${v.status}: ${v.why})`,
    );
  }
}

// 2. Every skipped test is accounted for by a recorded skip of its file.
let counts = '';
if (reportFile !== 'none') {
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  const suites = new Set(skips.map((s) => s.suite));
  let skipped = 0;
  for (const file of report.testResults) {
    const names = file.assertionResults
      .filter((t) => t.status !== 'passed' && t.status !== 'failed')
      .map((t) => t.fullName);
    skipped += names.length;
    const suite = path.relative(path.join(root, 'test'), file.name).replace(/\.test\.ts$/, '');
    if (names.length > 0 && !suites.has(suite))
      problems.push(`[${suite}] skipped ${names.length} test(s) without recording why: ${names.join('; ')}`);
  }
  counts = `${report.numTotalTests} tests, ${skipped} skipped`;
}

if (problems.length > 0) {
  console.error(`Tests were skipped that this machine could have run (${counts || 'no report read'}):`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
if (skips.length === 0) {
  console.log(`check-skips: nothing was skipped (${counts || 'no report read'}).`);
} else {
  console.log(
    `check-skips: ${counts || 'no report read'}; each skip is for something .ci/probe confirms this machine lacks:`,
  );
  for (const s of skips) console.log(`  - [${s.suite}] ${s.capability}: ${verdicts.get(s.capability).why || s.reason}`);
}
