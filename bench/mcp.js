// Issue 15 benchmark: `new` through `warren mcp` (one long-running server, driven by the MCP
// SDK's own client over stdio) beside `warren new` (a Node process per call), on the same
// repository; and `list`, where start-up is nearly all of the CLI's cost.
import path from 'node:path';
import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, machine, makeRepo, median, printTable, run, time, tmp } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

export async function benchMcp() {
  const base = tmp();
  const repo = makeRepo(path.join(base, 'repo'));
  const env = { ...process.env, WARREN_HOME: path.join(base, 'home') };
  const client = new Client({ name: 'warren-bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: repo, env, stderr: 'ignore' }),
  );
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${r.content[0]?.text}`);
    return r;
  };

  // Warm both paths once (page cache, database creation, the server's first call).
  await run(process.execPath, [BIN, 'new', 'chore', 'warm-cli'], { cwd: repo, env });
  await call('new', { type: 'chore', id: 'warm-mcp' });

  const cliNew = [];
  const mcpNew = [];
  const cliList = [];
  const mcpList = [];
  for (let i = 0; i < ROUNDS; i++) {
    cliNew.push((await time(() => run(process.execPath, [BIN, 'new', 'feat', `cli-${i}`], { cwd: repo, env }))).ms);
    mcpNew.push((await time(() => call('new', { type: 'feat', id: `mcp-${i}` }))).ms);
    cliList.push((await time(() => run(process.execPath, [BIN, '--json', 'list'], { cwd: repo, env }))).ms);
    mcpList.push((await time(() => call('list', {}))).ms);
  }
  await client.close();
  printTable(
    `new and list, median of ${ROUNDS} (${machine()})`,
    [
      { name: 'warren new (CLI)', ms: median(cliNew) },
      { name: 'new through warren mcp', ms: median(mcpNew) },
      { name: 'warren --json list (CLI)', ms: median(cliList) },
      { name: 'list through warren mcp', ms: median(mcpList) },
    ],
    'warren new (CLI)',
  );
  fs.rmSync(base, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMcp();
