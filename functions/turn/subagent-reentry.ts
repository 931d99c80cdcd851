import type { StoredMessage } from '../stores/message-store.ts';
import { AGENT_TOOL_NAMES } from '../stores/agent-log.ts';
import type { ResumeCalls } from './resume.ts';

/**
 * Agent calls that a dead turn left without a result (its process was killed mid-sub-agent).
 * Each sub-agent's own log holds everything it did, so instead of an error result the next turn
 * runs the call again: the sub-agent continues its log from where it stopped (dangling calls
 * repaired, replacement decisions reloaded), and a background launch finds its record and asks
 * for its invocation again. Only calls of the session's own log: a sub-agent's own dangling
 * calls are repaired inside it.
 */
export function agentCallsToReenter(conversation: readonly StoredMessage[], dangling: readonly string[]): ResumeCalls['blocks'] {
  const open = new Set(dangling);
  const calls: ResumeCalls['blocks'] = [];
  for (const message of conversation) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && open.has(block.id) && AGENT_TOOL_NAMES.has(block.name))
        calls.push({ id: block.id, name: block.name, input: block.input });
    }
  }
  return calls;
}

/**
 * The calls a turn runs before its first model call: the re-entered sub-agents, then any calls
 * answered after a durable ask. Their results join the last user message, results first
 * (the query loop's rule), so the request is the same one a reload of the log gives.
 */
export function withReentries(resume: ResumeCalls | undefined, calls: ResumeCalls['blocks']): ResumeCalls | undefined {
  if (calls.length === 0) return resume;
  return { blocks: [...calls, ...(resume?.blocks ?? [])], decisions: resume?.decisions ?? new Map() };
}
