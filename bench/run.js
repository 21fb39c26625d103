// Runs every benchmark in one process, one after another. `npm run bench`.
import { benchCore } from './core.js';

const only = process.argv[2];
const benches = { core: benchCore };
for (const [name, fn] of Object.entries(benches)) {
  if (only && only !== name) continue;
  console.log(`\n=== ${name} ===`);
  await fn();
}
