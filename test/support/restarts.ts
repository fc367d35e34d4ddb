// Restarts inside one process, for the session suites: bots that share one SQLite file. A
// first bot is abandoned mid-turn (its engine never hears from anyone again, as if its
// process had died); a second one opens the same file, recovers and carries on.
import type { ToolDefinition } from '../../src/engine/index.js';
import { ScriptedProvider, type Step } from '../fakes/scripted-provider.js';
import { tempDir, TestBot } from './test-connector.js';

export class Restarts {
  private readonly cleanups: (() => Promise<void>)[] = [];
  private readonly booted = new Map<string, TestBot[]>();

  /** A fresh SQLite store in a temporary folder, removed at clean-up. */
  async storeFile(): Promise<string> {
    const dir = await tempDir();
    this.cleanups.push(dir.remove);
    return `sqlite://${dir.path}/bot.sqlite`;
  }

  async boot(
    storeUrl: string,
    steps: Step[],
    tools: ToolDefinition[],
  ): Promise<{ bot: TestBot; provider: ScriptedProvider }> {
    const provider = new ScriptedProvider(steps);
    // The bots booted on this store before "died" (cluster mode: their leases run out).
    for (const earlier of this.booted.get(storeUrl) ?? []) await earlier.die();
    const bot = await TestBot.start({ provider, tools, storeUrl });
    this.booted.set(storeUrl, [...(this.booted.get(storeUrl) ?? []), bot]);
    this.cleanups.push(() => bot.stop());
    return { bot, provider };
  }

  async cleanup(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
  }
}
