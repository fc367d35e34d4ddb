// A lean fake of OpenAI's streamed Chat Completions, for the side-by-side loop bench
// (http-overhead.ts), run in a process of its own so its work never lands on the loop being
// timed. It keeps no state: each request is answered from how many tool results its messages
// hold. Below `TOOL_ROUNDS` it asks for one call of the `noop` tool (arguments streamed in two
// pieces, as OpenAI does), else it answers in text; every answer ends with a usage chunk and
// `[DONE]`, the stream OpenAI sends with `stream_options.include_usage`. The frames are made
// once per shape: what the server does per request is the same whatever loop asked.
//
// Run: `node --import tsx bench/sse-openai-server.ts <toolRounds>`; it prints its port on stdout.
import { createServer } from 'node:http';

const toolRounds = Number(process.argv[2] ?? 19);
const MODEL = 'gpt-4.1';

function frame(delta: object, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    usage: null,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

const USAGE = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: MODEL, choices: [], usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 } })}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** The answer to the request holding `round` tool results. */
function answer(round: number): string {
  if (round >= toolRounds) {
    const words = ['All ', 'done: ', 'the ', 'tool ', 'ran ', `${round} times.`];
    return [
      frame({ role: 'assistant', content: '' }),
      ...words.map((text) => frame({ content: text })),
      frame({}, 'stop'),
      USAGE,
      DONE,
    ].join('');
  }
  return [
    frame({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: `call_${round}`, type: 'function', function: { name: 'noop', arguments: '' } }],
    }),
    frame({ tool_calls: [{ index: 0, function: { arguments: '{"round":' } }] }),
    frame({ tool_calls: [{ index: 0, function: { arguments: `${round}}` } }] }),
    frame({}, 'tool_calls'),
    USAGE,
    DONE,
  ].join('');
}

const answers = Array.from({ length: toolRounds + 1 }, (_, round) => answer(round));
const TOOL_RESULT = '"role":"tool"';

const server = createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (piece: string) => (body += piece));
  request.on('end', () => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    // The SDK sends compact JSON: one `"role":"tool"` per tool result.
    let round = 0;
    for (let at = body.indexOf(TOOL_RESULT); at >= 0; at = body.indexOf(TOOL_RESULT, at + 1)) round++;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.end(answers[Math.min(round, toolRounds)]);
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(typeof address === 'object' && address ? address.port : 0);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
