// `npm run bench [NAME]`: runs every benchmark (or one), each in its own process, one after
// another so they do not load the machine for each other. Each prints ratios against a
// baseline it measured in the same run; none fails on a slow machine.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const BENCHES = [
  'core',
  'exec',
  'provision',
  'queue',
  'gate-snapshot',
  'mcp',
  'diff',
  'relocate',
  'bigrepo',
  'services',
  'fleet',
  'runners',
  'gate-place',
  'conflicts',
  'realworld',
  'modes',
].filter((name) => fs.existsSync(path.join(here, `${name}.js`)));
const only = process.argv[2];
if (only && !BENCHES.includes(only)) {
  console.error(`no benchmark "${only}"; there are: ${BENCHES.join(', ')}`);
  process.exit(2);
}
for (const name of BENCHES) {
  if (only && only !== name) continue;
  console.log(`\n=== ${name} ===`);
  const res = spawnSync(process.execPath, [path.join(here, `${name}.js`)], { stdio: 'inherit' });
  if (res.status !== 0) console.log(`(${name} exited ${res.status})`);
}
