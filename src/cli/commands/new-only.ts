// What the entry of `warren new` (src/cli/bin-new.ts) loads, in one import: two (the command and
// src/cli/main.ts) made 10 files of the build against 7, and cost ~10 ms more of a cold `new`.
export { registerNew } from './new.js';
export { main, prepareMain } from '../main.js';
