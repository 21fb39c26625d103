/**
 * The facts later stages record about a task, kept as JSON in its row. This layer names none of
 * them: each feature declares its own keys once, in its `facts.ts`, with the reader that checks
 * a value's shape, and adds them to `TaskFacts` by declaration merging. So a reader of a field
 * nobody writes is a compile error, not a value that is never there. A key is written by the
 * feature that declares it; keys are only ever added.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' facts.ts
export interface TaskFacts {}

/**
 * Reads one key's value as stored, or undefined: a row written by an older warren, or edited by
 * hand, loses a malformed key (or, in a list, a malformed entry) rather than handing a reader
 * something it did not expect.
 */
export type FactReader<T> = (raw: unknown) => T | undefined;

/** The facts a feature's readers declare (every key optional: a task has only what was recorded). */
export type FactsOf<M> = { [K in keyof M]?: M[K] extends FactReader<infer T> ? T : never };

/** One reader for every key of `TaskFacts`: what the store reads rows with (src/composition.ts joins the features'). */
export type FactReaders = { [K in keyof TaskFacts]-?: FactReader<NonNullable<TaskFacts[K]>> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A reader of an object whose shape `check` accepts: the one place a stored value becomes its type. */
export function objectFact<T>(check: (v: Record<string, unknown>) => boolean): FactReader<T> {
  return (raw) => (isObject(raw) && check(raw) ? (raw as T) : undefined);
}

/** A reader of a list, keeping the entries whose shape `check` accepts. */
export function listFact<T>(check: (v: Record<string, unknown>) => boolean): FactReader<T[]> {
  return (raw) => (Array.isArray(raw) ? raw.filter((e): e is T => isObject(e) && check(e)) : undefined);
}

/** Reads a row's JSON into the typed facts, keeping only the keys `readers` know and accept. Pure. */
export function readFacts(json: string, readers: Readonly<Record<string, FactReader<unknown>>>): TaskFacts {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return {};
  }
  if (!isObject(raw)) return {};
  const facts: Record<string, unknown> = {};
  for (const [key, read] of Object.entries(readers)) {
    const value = key in raw ? read(raw[key]) : undefined;
    if (value !== undefined) facts[key] = value;
  }
  return facts as TaskFacts;
}
