import { listFact, objectFact, type FactsOf } from '../state/facts.js';

/** What a task's services are, as made at `warren new`: enough to wire, show, stop and drop them. */
export type ServiceFact =
  | {
      kind: 'postgres';
      /** The database, and its role of the same name. */
      database: string;
      password: string;
      /** `warren`: warren's own cluster; `user`: the server the user named. */
      server: 'warren' | 'user';
      /** What it was cloned from: a template database, `empty`, or a dump (`restore`). */
      from:
        { kind: 'template'; name: string; seed: string | null } | { kind: 'empty' } | { kind: 'dump'; file: string };
    }
  | { kind: 'redis'; port: number; password: string }
  | { kind: 'run'; port: number };

export const SERVICE_FACTS = {
  /** Copied env files whose keys named the main checkout's services, set to the task's own at `new`. */
  servicesEnvRewritten: listFact<{ file: string; keys: string[] }>(
    (v) => typeof v.file === 'string' && Array.isArray(v.keys),
  ),
  services: objectFact<Record<string, ServiceFact>>((v) =>
    Object.values(v).every(
      (s) => typeof s === 'object' && s !== null && typeof (s as { kind?: unknown }).kind === 'string',
    ),
  ),
};

declare module '../state/facts.js' {
  interface TaskFacts extends FactsOf<typeof SERVICE_FACTS> {}
}
