// The V8 settings the bot runs with (bin/start.mjs applies them before the bot loads; the
// benches that stand for the bot pass them too). One, measured (issue 19, "Memory"):
//
// --heap-growing-percent=100: after a full collection V8 lets the heap grow to twice what is
// live before the next one, not up to four times (its default for large heaps; twice is its own
// limit for small heaps and with --optimize-for-size). The bot holds little (about 70 MB live
// with 1,000 turns in flight) and makes much short-lived garbage, so the default let the heap
// reach four times that: 1,000 people mentioning the bot at once peaked at 365 MB resident with
// the default and 221 MB with this (bench/process.bench.ts, medians of three bursts, 354-423
// and 216-282), in about the same time, for up to a tenth more CPU (more full collections:
// 19.1 s against 17.7 s for the burst). A bot holding more live data collects more often in
// proportion, which a bot waiting on the network can afford. The flag exists in Node 20, 22 and 24; a Node without it
// would say so in one line on stderr and run with its default.
export const V8_FLAGS = ['--heap-growing-percent=100'];
