import { TASK_EXIT_2, type CommandReference } from './shared.js';

/** The command reference for a task's services: `service start|stop|logs`, `env` (see src/cli/reference.ts). */
export const SERVICES: Readonly<Record<string, CommandReference>> = {
  'service start': {
    json: `{
  name: string; kind: 'postgres' | 'redis' | 'run';
  state: 'running' | 'stopped' | 'crashed' | 'absent' | 'external';   // external: on your own server, not watched
  url: string | null;          // DATABASE_URL, REDIS_URL or http://127.0.0.1:PORT (passwords included)
  port: number | null; log: string | null;
  exitCode?: number | null;    // crashed: its exit status (null: killed)
  database?: string; from?: string;   // postgres: the task's database and what it was cloned from
  cluster?: string; pod?: string;     // a task in a cluster: it runs in the task's pod there (the URL is the pod's loopback)
}`,
    exit: [
      [0, 'the service is running (and ready, when it has a readiness check)'],
      [
        1,
        'the service did not become ready (it was stopped; the message ends with its log), or its server is not installed',
      ],
      TASK_EXIT_2,
    ],
    errors: ['SERVICE_UNKNOWN', 'SERVICE_FAILED', 'SERVICE_UNAVAILABLE', 'TASK_STATE', 'UNTRUSTED_COMMANDS'],
    example: `$ warren service start cart web
web  run  running  http://127.0.0.1:20009  (log /tmp/warren-docs-iqVKjQ/home/logs/shop-07830bb079/cart/service-web.log)
[exit 0]
$ warren service start cart nope
warren: task cart has no service "nope"; nothing was changed.
  hint: Its services: db, cache, web.
[exit 2]`,
    see: [['Services', '../design/services.md']],
  },
  'service stop': {
    json: `as \`service start\``,
    exit: [
      [0, 'the service is stopped (SIGTERM, then SIGKILL after kill_grace; nothing of it is left)'],
      [1, 'a database (it goes with the task, not alone)'],
      TASK_EXIT_2,
    ],
    errors: ['SERVICE_UNKNOWN', 'SERVICE_FAILED'],
    example: `$ warren service stop cart web
web  run  stopped  http://127.0.0.1:20009  (log /tmp/warren-docs-iqVKjQ/home/logs/shop-07830bb079/cart/service-web.log)
[exit 0]`,
    see: [['Services', '../design/services.md']],
  },
  'service logs': {
    json: `{ name: string; log: string; text: string }`,
    exit: [[0, 'the log was printed'], [1, 'it never started'], TASK_EXIT_2],
    errors: ['SERVICE_UNKNOWN', 'SERVICE_FAILED'],
    example: `$ warren service logs cart cache --lines 1
2:M 06 Dec 2026 03:40:44.733 * Ready to accept connections
[exit 0]`,
    see: [['Services', '../design/services.md']],
  },
  env: {
    json: `{ env: Record<string, string> }   // WARREN_TASK_ID, WARREN_PORT…, and each service's variables`,
    exit: [[0, 'printed'], TASK_EXIT_2],
    errors: ['TASK_NOT_FOUND', 'ID_INVALID'],
    example: `$ warren env cart
export WARREN_TASK_ID='cart'
export WARREN_WORKSPACE='/tmp/warren-docs-iqVKjQ/home/worktrees/shop-07830bb079/cart'
export WARREN_BRANCH='feat/cart'
export WARREN_DB_NAME='warren_cart_5c0b8e1f1a'
export WARREN_PORT='20000'
export PORT='20000'
export WARREN_PORTS='20000,20001,20002,20003,20004,20005,20006,20007,20008,20009'
export WARREN_SERVICE_WEB_PORT='20009'
export WARREN_SERVICE_WEB_URL='http://127.0.0.1:20009'
[exit 0]`,
    see: [['Services: processes warren does not start', '../design/services.md#processes-warren-does-not-start']],
  },
};
