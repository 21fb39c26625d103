import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * vitest's global setup: one folder for the whole run where test/helpers/repo.ts keeps the
 * repositories it copies (WARREN_TEST_TEMPLATES, inherited by every worker), removed when the run
 * ends. A worker is ended without running its `exit` handlers, so it cannot clean up itself.
 */
export default function setup(): () => void {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'warren-test-templates-')));
  process.env.WARREN_TEST_TEMPLATES = dir;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
