import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { serviceLogFile, startService, stopService, taskEnvironment } from '../../services/operations.js';
import type { ServiceStatus } from '../../services/task-services.js';
import { terminalStream } from '../../util/terminal-text.js';
import { serviceWhere } from '../format.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';

function line(s: ServiceStatus): string {
  return `${s.name}  ${s.kind}  ${s.state}${s.url ? `  ${s.url.replace(/\/\/[^@/]*@/, '//')}` : ''}${serviceWhere(s)}${s.log ? `  (log ${s.log})` : ''}`;
}

export const registerService: Register = (program, run) => {
  const service = program
    .command('service')
    .description("a task's services (warren.yaml `services:`): start or stop one, read its log");
  const verbs = [
    ['start', 'start a service of the task (again, after a crash or a stop) and wait until it is ready', startService],
    ['stop', 'stop a process service of the task (SIGTERM, then SIGKILL after kill_grace)', stopService],
  ] as const;
  for (const [verb, description, act] of verbs) {
    service
      .command(verb)
      .description(description)
      .argument('<id>')
      .argument('<name>')
      .action((rawId: string, name: string) =>
        run(async (env) => {
          env.taskId = validateTaskId(rawId);
          const s = await act(await env.project(), rawId, name);
          return { data: s, human: line(s) };
        }),
      );
  }
  service
    .command('logs')
    .description("print a service's log (its last lines with --lines)")
    .argument('<id>')
    .argument('<name>')
    .option('--lines <n>', 'only the last N lines')
    .option('-f, --follow', 'then keep printing what the service writes, until ctrl-c')
    .action((rawId: string, name: string, opts: { lines?: string; follow?: boolean }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const log = serviceLogFile(ctx, rawId, name);
        // Followed from the bytes read here, not the size after printing them: what the service
        // appends in between would be skipped. One decoder for both, so a character split at the
        // end of this read is printed whole by the first follow.
        const bytes = fs.readFileSync(log);
        const decoder = new StringDecoder('utf8');
        let text = opts.follow && !env.json ? decoder.write(bytes) : bytes.toString('utf8');
        const n = opts.lines === undefined ? null : Number.parseInt(opts.lines, 10);
        if (n !== null && n >= 0) text = text.trimEnd().split('\n').slice(-n).join('\n');
        // The service's output, as a terminal would show it with colours, none of its other escape sequences obeyed.
        if (!opts.follow || env.json)
          return { data: { name, log, text }, human: text.trimEnd(), humanLayout: 'stream' };
        const shown = terminalStream();
        env.io.stdout.write(shown.write(text.endsWith('\n') || text === '' ? text : `${text}\n`));
        await follow(log, bytes.length, decoder, (chunk) => env.io.stdout.write(shown.write(chunk)));
        env.io.stdout.write(shown.flush());
        return { data: { name, log, text }, human: '' };
      }),
    );
};

/** Passes on what is appended to `log` from `from` on, every 200 ms, until SIGINT or SIGTERM. */
async function follow(log: string, from: number, decoder: StringDecoder, out: (text: string) => void): Promise<void> {
  let at = from;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      let size: number;
      try {
        size = fs.statSync(log).size;
      } catch {
        return;
      }
      if (size < at) at = 0; // the log was replaced
      if (size === at) return;
      const fd = fs.openSync(log, 'r');
      try {
        const buf = Buffer.alloc(size - at);
        fs.readSync(fd, buf, 0, buf.length, at);
        out(decoder.write(buf));
        at = size;
      } finally {
        fs.closeSync(fd);
      }
    }, 200);
    const stop = (): void => {
      clearInterval(timer);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export const registerEnv: Register = (program, run) => {
  program
    .command('env')
    .description(
      'the variables every command of the task sees (ports, services), as export lines: eval "$(warren env ID)"',
    )
    .argument('<id>')
    .action((rawId: string) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const { env: vars, shell } = taskEnvironment(ctx, rawId);
        return { data: { env: vars }, human: shell };
      }),
    );
};
