// Every Discord REST call, counted on the operations bus as a `platform_call` (the metrics'
// chat_agent_platform_calls_total): discord.js's own `response` event on each REST client
// (the connector's posting client and each gateway client's), which names the route as a
// template (`/channels/:id/messages`: discord.js puts `:id` for every snowflake, `:token` for
// webhook and interaction tokens, `:reaction` for an emoji), so no id reaches a label.
//
// Outcomes: `rate_limited` for a 429 (each one Discord answered; discord.js then waits and
// retries), `error` for another HTTP error, `ok` otherwise. A request that got no answer at all
// (a network error) has no `response` event and is not counted. discord.js's `rateLimited`
// event is a wait it chose before sending (a bucket it knows is empty), not a call: not counted.
// Registered only when a sink listens: the `response` event costs discord.js a clone of each
// answer.
import type { REST } from 'discord.js';
import type { OpsBus } from '../../src/ops/ops-events.js';

export function countRestCalls(rest: REST, ops: OpsBus, now: () => number = Date.now): void {
  if (!ops.listening) return;
  rest.on('response', (request, response) => {
    const status = response.status;
    ops.emit({
      type: 'platform_call',
      at: now(),
      platform: 'discord',
      method: `${request.method.toUpperCase()} ${routeTemplate(request.route)}`,
      outcome: status === 429 ? 'rate_limited' : status >= 400 ? 'error' : 'ok',
    });
  });
}

/** discord.js's route, with any long number it left (not a 17-19 digit snowflake) made `:id` too. */
function routeTemplate(route: string): string {
  return route.replace(/\/\d{5,}(?=\/|$)/g, '/:id');
}
