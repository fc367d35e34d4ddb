// One start-up recovery in a process of its own (see recovery.bench.ts): prints its figures
// as one JSON line.
import { recoverAndReport } from './recovery.bench.js';

const [url, mode] = process.argv.slice(2);
if (!url) throw new Error('usage: recovery-child.ts <store url> [full-scan]');
console.log(JSON.stringify(await recoverAndReport(url, mode === 'full-scan')));
