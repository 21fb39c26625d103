import type { Register } from '../command.js';

export const registerMcp: Register = (program, run) => {
  program
    .command('mcp')
    .description(
      'an MCP server over stdio with the tools new, list, show, status, diff, exec, verify, checkpoint, land, rm (register it with your agent: docs/agents.md)',
    )
    .action(() =>
      run(async (env) => {
        // Loaded only here: the SDK and its dependencies stay out of every other command's start-up.
        const { serveMcp } = await import('../../mcp/server.js');
        await serveMcp({ repoDir: env.repoDir, store: () => env.store(), version: program.version() ?? '0.0.0' });
        // stdout belonged to the protocol: nothing more is printed.
        return { data: null, human: '' };
      }),
    );
};
