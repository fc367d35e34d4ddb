// A tool call's full text read back from the session's transcript: what Show all shows when the
// thread's presenter no longer holds the card (after a restart, or for a card decided before
// it; ThreadPresenter.fullTextOf comes first). The arguments are parsed the way the engine
// parses them, so the text is what the tool received; a call whose arguments the model
// mangled is shown as it came.
import { parseToolArguments } from '../../src/engine/index.js';
import type { ThreadRecords } from '../../src/sessions/thread-records.js';
import { callArguments, type CallText } from './call-arguments.js';

/** The call's full text from the session's transcript, or undefined when it is no longer stored. */
export async function storedCallText(
  records: Pick<ThreadRecords, 'transcript'>,
  sessionId: string,
  toolCallId: string,
): Promise<CallText | undefined> {
  const transcript = await records.transcript(sessionId);
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i]!;
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((candidate) => candidate.id === toolCallId);
    if (!call) continue;
    const args = parseToolArguments(call.function.arguments);
    return { name: call.function.name, parts: callArguments(call.function.name, args.ok ? args.value : args.raw) };
  }
  return undefined;
}
