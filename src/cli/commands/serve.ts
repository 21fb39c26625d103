import { Option } from 'commander';
import { WarrenError } from '../../errors.js';
import { openProject } from '../../composition.js';
import { SILENT } from '../../workspace/reporter.js';
import { isLoopbackHost } from '../../web/security.js';
import { openOwnStore, type Register } from '../command.js';

export const DEFAULT_PORT = 7317;

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new WarrenError(
      'USAGE',
      `--port ${JSON.stringify(raw)} is not a port number (0–65535); nothing was started.`,
      { hint: 'Use --port 0 for any free port.' },
    );
  }
  return port;
}

/**
 * `warren serve`: the dashboard. The handler returns once the server listens, so the entry point
 * prints the URL as it prints any result; the open server keeps the process alive until
 * SIGINT/SIGTERM. It owns its own Store: the entry point closes the CLI's when the handler returns.
 */
export const registerServe: Register = (program, run) => {
  program
    .command('serve')
    .description('the local dashboard: the fleet, live logs, diffs and actions (127.0.0.1 only by default)')
    .addOption(new Option('--port <n>', 'port to listen on; 0 picks a free one').default(String(DEFAULT_PORT)))
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .option('--allow-remote', 'allow a non-loopback --host (anyone who can reach it gets full control)')
    .action((opts: { port: string; host: string; allowRemote?: boolean }) =>
      run(async (env) => {
        const port = parsePort(opts.port);
        const store = openOwnStore({ onNotice: env.log });
        try {
          // The dashboard's own calls report nothing on this terminal: runs have their logs, warnings their events.
          const project = await openProject(env.repoDir, { store, reporter: SILENT });
          // Loaded on use: the web server's modules stay out of every other command's start-up.
          const { startServer } = await import('../../web/server.js');
          const server = await startServer({
            project,
            store,
            host: opts.host,
            port,
            allowRemote: opts.allowRemote === true,
            warn: env.log,
          });
          if (!isLoopbackHost(opts.host)) {
            const message = `warren serve is listening on ${opts.host}, reachable from other machines: anyone holding the printed URL (it carries the token) can remove workspaces.`;
            env.log(`warning: ${message}`);
            store.addEvent({
              project: project.key,
              kind: 'serve.remote',
              level: 'warn',
              message,
              data: { host: opts.host, port: server.port },
            });
          }
          const stop = () => {
            void server.close().finally(() => {
              store.close();
              process.exit(0);
            });
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
          return {
            // The URL carries the token: the page reads it from its address. A program that starts
            // `warren --json serve` reads it here too (stdout goes to it alone).
            data: {
              url: server.openUrl,
              host: server.host,
              port: server.port,
              pid: process.pid,
              token: server.token,
              tokenFile: server.tokenFile,
            },
            human: `warren dashboard: ${server.openUrl}\n(the token is also in ${server.tokenFile}; ctrl-c to stop)`,
          };
        } catch (err) {
          store.close();
          throw err;
        }
      }),
    );
};
