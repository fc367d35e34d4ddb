// The V8 settings the bot runs with (bin/start.mjs applies them before the bot loads; the
// benches that stand for the bot pass them too). Two, measured (bench/process.bench.ts):
//
// --heap-growing-percent=50: after a full collection V8 lets the heap grow to one and a half
// times what is live before the next one, not up to four times (its default for large heaps).
// The bot holds little (60-90 MB live with 1,000 turns in flight) and makes much short-lived
// garbage, so the default let the heap reach four times that: 1,000 people mentioning the bot
// at once peaked at 365 MB resident with the default, 221 MB with twice (100), and, with the
// next flag, 204 MB with one and a half where twice gave 271 MB (one burst each, a machine at
// load 18). A bot holding more live data collects more often in proportion, which a bot waiting
// on the network can afford: the bursts' CPU time stayed within their noise (64-79 s).
//
// --semi-space-growth-factor=1: the young generation stays at its first size (two 1 MB
// semi-spaces) instead of doubling up to 2 x 16 MB, which it did during start-up and kept for
// good: 32 MB of an idle bot's memory held for garbage. Idle, the bot went from about 117 MB to
// about 93 MB resident; start-up took no longer (medians of five starts each: 1.3 s of CPU
// either way). Set at run time (start.mjs), unlike --max-semi-space-size, which only the
// command line can set.
//
// Both flags exist in Node 20, 22 and 24; a Node without one would say so in one line on stderr
// and run with its default.
export const V8_FLAGS = ['--heap-growing-percent=50', '--semi-space-growth-factor=1'];
