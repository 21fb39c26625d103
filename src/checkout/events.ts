import { payload, type PayloadsOf } from '../state/events.js';

/** Copy-on-write checkouts' events. */
export const CHECKOUT_EVENTS = {
  'checkout.snapshot': payload<{
    commit: string;
    from: string | null;
    changed: number | null;
    files: number;
    ms: number;
  }>(),
  'checkout.cow': payload<{ commit: string; method: string; ms: number }>(),
  'checkout.fallback': payload<{ requested: 'cow' | 'auto'; reason: string }>(),
  'checkout.remount': payload<{ path: string }>(),
  'checkout.unmounted': payload<{ path: string }>(),
};

declare module '../state/events.js' {
  interface EventPayloads extends PayloadsOf<typeof CHECKOUT_EVENTS> {}
}
