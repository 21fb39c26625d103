import { payload, type PayloadsOf } from '../state/events.js';

/** The dashboard's events. */
export const DASHBOARD_EVENTS = {
  'serve.remote': payload<{ host: string; port: number }>(),
  /** A connection from another local user, or from one the kernel could not name (once per uid a run). */
  'serve.refused': payload<{ uid: number | null; peer: string; reason: string }>(),
  /** The token file could not be used (readable by others, not a token…) and a new token took its place. */
  'serve.token-replaced': payload<{ file: string; reason: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof DASHBOARD_EVENTS> {}
}
