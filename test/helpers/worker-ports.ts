/**
 * vitest's setup for every test file: warren's port blocks from a range of this worker's own
 * (WARREN_PORT_RANGE). Test files run two or three at a time and every test has a WARREN_HOME of its
 * own, so without it two tests' tasks get the same block at once, and their services and dev
 * servers the same ports.
 */
const WIDTH = 3000;
if (!process.env.WARREN_PORT_RANGE) {
  const worker = Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1) || 1);
  const first = 20000 + ((worker - 1) % 4) * WIDTH;
  process.env.WARREN_PORT_RANGE = `${first}-${first + WIDTH - 1}`;
}
