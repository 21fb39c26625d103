/**
 * Every kind of event warren records, with its payload. This layer names none of them: each
 * feature lists its own kinds once, in its `events.ts` (src/workspace/events.ts,
 * src/land/events.ts, …), and adds them to `EventPayloads` by declaration merging. `addEvent`
 * takes only those, so a reader matching a kind nobody records (or a field a kind does not
 * carry) does not compile. Kinds are only ever added; an old database may hold kinds no longer
 * recorded.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' events.ts
export interface EventPayloads {}

/** A kind's payload type, carried by a value: a feature's kinds are listed once, and at run time too. */
export interface Payload<T> {
  readonly payload?: T;
}

/** The carrier of payload type `T` (`'task.created': payload<{ branch: string }>()`). */
export function payload<T>(): Payload<T> {
  return {};
}

/** The payload types of a feature's list of kinds. */
export type PayloadsOf<M> = { [K in keyof M]: M[K] extends Payload<infer T> ? T : never };

export type EventKind = keyof EventPayloads;
export type EventLevel = 'info' | 'warn' | 'error';

interface EventBase {
  project: string | null;
  taskId?: string | null;
  level?: EventLevel;
  message: string;
}

/** What `addEvent` takes: a kind and exactly its payload. */
export type NewEvent = {
  [K in EventKind]: EventBase & { kind: K } & (Record<string, never> extends EventPayloads[K]
      ? { data?: EventPayloads[K] }
      : { data: EventPayloads[K] });
}[EventKind];

interface RecordedBase {
  seq: number;
  at: string;
  project: string | null;
  taskId: string | null;
  level: EventLevel;
  message: string;
}

/** A recorded event: narrowing on `kind` gives its payload. */
export type WarrenEvent = { [K in EventKind]: RecordedBase & { kind: K; data: EventPayloads[K] } }[EventKind];

/** The newest event of `kind` among `events` (oldest first), typed. Pure. */
export function newestOf<K extends EventKind>(
  events: readonly WarrenEvent[],
  kind: K,
): Extract<WarrenEvent, { kind: K }> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e && e.kind === kind) return e as Extract<WarrenEvent, { kind: K }>;
  }
  return null;
}
