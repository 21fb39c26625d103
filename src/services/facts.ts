import { listFact, objectFact, type FactsOf } from '../state/facts.js';

/** What a task's services are, as made at `warren new`: enough to wire, show, stop and drop them. */
export type ServiceFact =
  | ({
      kind: 'postgres';
      /** The database, and its role of the same name. */
      database: string;
      password: string;
      /**
       * What it was made from: a template database, `empty`, a dump (`restore`), or (in a pod) its
       * seed run there.
       */
      from:
        | { kind: 'template'; name: string; seed: string | null }
        | { kind: 'empty' }
        | { kind: 'dump'; file: string }
        | { kind: 'seed'; seed: string };
    } & (
      | {
          /** `warren`: warren's own cluster; `user`: the server the user named. */
          server: 'warren' | 'user';
        }
      | {
          /** A task in a cluster: a server of the task's own in its pod (src/services/pg-pod.ts), on `port` of its loopback. */
          server: 'pod';
          port: number;
        }
    ))
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
