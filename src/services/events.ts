import { payload, type PayloadsOf } from '../state/events.js';

/** The services' events: each start, stop and crash, what a database was cloned from, and what was dropped. */
export const SERVICE_EVENTS = {
  'service.started': payload<{
    name: string;
    service: string;
    port: number | null;
    log: string;
    readyMs: number | null;
  }>(),
  'service.stopped': payload<{ name: string; forced: boolean }>(),
  /** It ended by itself while the task held it: found by the next command that looked. */
  'service.crashed': payload<{ name: string; exitCode: number | null; log: string; startedAt: string }>(),
  'service.failed': payload<{ name: string; reason: string; log: string | null }>(),
  'service.database_created': payload<{ name: string; database: string; from: string; ms: number }>(),
  'service.database_dropped': payload<{ name: string; database: string }>(),
  'service.database_dumped': payload<{ name: string; database: string; file: string }>(),
  'service.template_built': payload<{ name: string; template: string; seed: string; ms: number }>(),
  'service.server_restarted': payload<{ message: string }>(),
  /** warren.yaml asked more for a database's role than the user's caps (postgres.limits) allow: it got the caps. */
  'service.limits_capped': payload<{ name: string; capped: { key: string; asked: number; cap: number }[] }>(),
  /** After a run: sessions of the task's role whose client had gone (a run's), ended. */
  'service.sessions_ended': payload<{ name: string; role: string; pids: number[] }>(),
  'service.env_written': payload<{ file: string; keys: string[] }>(),
  'service.env_rewritten': payload<{ file: string; keys: string[] }>(),
  'service.gc': payload<{ dropped: string[]; stopped: string[] }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof SERVICE_EVENTS> {}
}
