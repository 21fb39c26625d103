import { payload, type PayloadsOf } from '../state/events.js';

/** The dashboard's events. */
export const DASHBOARD_EVENTS = {
  'serve.remote': payload<{ host: string; port: number }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof DASHBOARD_EVENTS> {}
}
