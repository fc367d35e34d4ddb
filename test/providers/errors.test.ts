// The words a provider's failure becomes, from the facts the provider read off the SDK's error.
import { describe, expect, it } from 'vitest';
import { friendlyProviderError } from '../../src/providers/errors.js';

const facts = { vendor: 'OpenAI', model: 'gpt-4.1', status: undefined, code: undefined, apiMessage: undefined };

describe('friendlyProviderError', () => {
  it('tells a timeout from an unreachable server by the SDK class, under the name the bundle gives it too', () => {
    for (const className of ['APIConnectionTimeoutError', 'APIConnectionTimeoutError2']) {
      expect(friendlyProviderError({ ...facts, className }, new Error('x')).kind).toBe('stalled');
    }
    for (const className of ['APIConnectionError', 'APIConnectionError2']) {
      const error = friendlyProviderError({ ...facts, className }, new Error('x'));
      expect(error.kind).toBe('connection');
      expect(error.message).toBe('Could not reach OpenAI: check the network or the base URL.');
    }
  });
});
