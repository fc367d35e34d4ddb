// What a person views, kept per thread or per person: a person's view reaches a thread only
// when carried there (and only when newer), a thread's own is forgotten with it.
import Keyv from 'keyv';
import { describe, expect, it } from 'vitest';
import { ViewingContexts } from '../../src/context/viewing-contexts.js';

const thread = { platform: 'slack', workspace: 'T1', channel: 'D1', thread: '1.000' };
const person = { platform: 'slack', workspace: 'T1', userId: 'U1' };

describe('viewing contexts', () => {
  it('gives a thread its own view; a person’s view only once carried, and only when newer', async () => {
    let now = 1_000;
    const viewing = new ViewingContexts(new Keyv(), () => now);
    expect(await viewing.describe(thread)).toBe('');
    await viewing.set({ person }, 'viewing C-A');
    expect(await viewing.describe(thread)).toBe('');
    await viewing.carryPersonal(thread, person);
    expect(await viewing.describe(thread)).toBe('viewing C-A');
    now += 1;
    await viewing.set({ thread }, 'viewing C-B');
    await viewing.carryPersonal(thread, person);
    expect(await viewing.describe(thread)).toBe('viewing C-B');
    await viewing.set({ thread }, undefined);
    expect(await viewing.describe(thread)).toBe('');
  });

  it('forgets a thread’s view with the thread', async () => {
    const viewing = new ViewingContexts(new Keyv());
    await viewing.set({ thread }, 'viewing C-A');
    await viewing.forget(thread);
    expect(await viewing.describe(thread)).toBe('');
  });
});
