import { objectFact, type FactsOf } from '../state/facts.js';
import type { CheckoutFacts } from './types.js';

/** What a copy-on-write checkout records on its task: its layers (written before its mount is made). */
export const CHECKOUT_FACTS = {
  checkout: objectFact<CheckoutFacts>(
    (v) => v.mode === 'cow' && typeof v.lower === 'string' && typeof v.upper === 'string' && typeof v.work === 'string',
  ),
};

declare module '../state/facts.js' {
  interface TaskFacts extends FactsOf<typeof CHECKOUT_FACTS> {}
}
