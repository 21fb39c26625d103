import fs from 'node:fs';
import { serviceLogFile, startService, stopService, taskEnvironment } from '../../services/operations.js';
import type { ServiceStatus } from '../../services/task-services.js';
import { validateTaskId } from '../../workspace/ids.js';
import type { Register } from '../command.js';

function line(s: ServiceStatus): string {
  return `${s.name}  ${s.kind}  ${s.state}${s.url ? `  ${s.url.replace(/\/\/[^@/]*@/, '//')}` : ''}${s.log ? `  (log ${s.log})` : ''}`;
}

export const registerService: Register = (program, run) => {
  const service = program
    .command('service')
    .description("a task's services (warren.yaml `services:`): start or stop one, read its log");
  service
    .command('start')
    .description('start a service of the task (again, after a crash or a stop) and wait until it is ready')
    .argument('<id>')
    .argument('<name>')
    .action((rawId: string, name: string) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const s = await startService(ctx, rawId, name);
        return { data: s, human: line(s) };
      }),
    );
  service
    .command('stop')
    .description('stop a process service of the task (SIGTERM, then SIGKILL after kill_grace)')
    .argument('<id>')
    .argument('<name>')
    .action((rawId: string, name: string) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const s = await stopService(ctx, rawId, name);
        return { data: s, human: line(s) };
      }),
    );
  service
    .command('logs')
    .description("print a service's log (its last lines with --lines)")
    .argument('<id>')
    .argument('<name>')
    .option('--lines <n>', 'only the last N lines')
    .action((rawId: string, name: string, opts: { lines?: string }) =>
      run(async (env) => {
        env.taskId = validateTaskId(rawId);
        const ctx = await env.project();
        const log = serviceLogFile(ctx, rawId, name);
        let text = fs.readFileSync(log, 'utf8');
        const n = opts.lines === undefined ? null : Number.parseInt(opts.lines, 10);
        if (n !== null && n >= 0) text = text.trimEnd().split('\n').slice(-n).join('\n');
        return { data: { name, log, text }, human: text.trimEnd() };
      }),
    );
};

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
