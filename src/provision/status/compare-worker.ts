import { parentPort, workerData } from 'node:worker_threads';
import { compareEntries, type ToCompare } from './compare.js';

/** compare.ts's second half: the entries it was given, compared, sent back once. */
const { upper, lower, items } = workerData as { upper: string; lower: string; items: ToCompare[] };
parentPort?.postMessage(compareEntries(upper, lower, items));
