// The settings every test that boots the real core starts from: the fake model, a store and a
// workspace in the test's own folder, and no MCP servers. A test adds its platform and overrides.
import { join } from 'node:path';
import type { FakeOpenAI } from '../fakes/openai-server.js';

export function coreTestEnv(dir: string, llm: Pick<FakeOpenAI, 'baseURL'>): Record<string, string> {
  return {
    MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.baseURL,
    STORE_URL: `sqlite://${dir}/data/bot.sqlite`,
    WORKSPACE_DIR: join(dir, 'workspace'),
    MCP_CONFIG: join(dir, 'mcp.json'),
  };
}
