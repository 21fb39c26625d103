// `npm run docs`: writes the command reference (docs/commands/) and docs/errors.md from the
// built command definitions (run after `npm run build`, which the npm script does first).
// test/docs.test.ts renders the same pages in memory and fails when these files drift.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_MARK, renderDocs } from '../dist/cli/docs-render.js';
import { COMMANDS } from '../dist/cli/commands/all.js';
import { buildProgram } from '../dist/cli/main.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = renderDocs(buildProgram(COMMANDS, async () => {}));

let written = 0;
for (const [rel, content] of files) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content) continue;
  fs.writeFileSync(file, content);
  written += 1;
  console.log(`wrote ${rel}`);
}

// A page of a command that no longer exists goes, but only a page this script generated.
const dir = path.join(root, 'docs/commands');
for (const name of fs.readdirSync(dir)) {
  const rel = `docs/commands/${name}`;
  if (files.has(rel) || !name.endsWith('.md')) continue;
  if (!fs.readFileSync(path.join(dir, name), 'utf8').startsWith(GENERATED_MARK)) continue;
  fs.rmSync(path.join(dir, name));
  console.log(`removed ${rel} (no such command)`);
}
console.log(`${files.size} page(s), ${written} changed`);
