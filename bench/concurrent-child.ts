// 1,000 concurrent turns in a process of their own (see store.bench.ts): prints its figures
// as one JSON line.
import { measureConcurrentTurns } from './store.bench.js';

console.log(JSON.stringify(await measureConcurrentTurns()));
