import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

/**
 * The tools ToolSearch has found so far: every `tool_reference` inside a tool_result of the
 * conversation. The conversation is what a turn reloads from the message log, so discoveries
 * survive reloads on any instance without state of their own. (A compaction summarises them
 * away: after one, the model searches again.)
 */
export function discoveredToolNames(messages: readonly MessageParam[]): Set<string> {
  const found = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'user' || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      for (const inner of block.content as unknown[]) {
        const ref = inner as { type?: unknown; tool_name?: unknown };
        if (ref.type === 'tool_reference' && typeof ref.tool_name === 'string') found.add(ref.tool_name);
      }
    }
  }
  return found;
}

/** The first message of a request that defers tools: the names the model can search for, sorted (byte-stable). */
export function deferredToolsMessage(names: readonly string[]): MessageParam {
  return { role: 'user', content: [{ type: 'text', text: `<available-deferred-tools>\n${[...names].sort().join('\n')}\n</available-deferred-tools>` }] };
}

/**
 * When nothing is deferred (mode `standard`, or the servers are gone), `tool_reference` blocks
 * from earlier searches are not sent: a request without loaded tools cannot carry them. The
 * reference replaces a result that held only references with this note.
 */
export function withoutToolReferences(messages: MessageParam[]): MessageParam[] {
  if (!messages.some(hasToolReference)) return messages;
  return messages.map((message) => {
    if (!hasToolReference(message)) return message;
    const content = (message.content as Exclude<MessageParam['content'], string>).map((block) => {
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) return block;
      const kept = block.content.filter((inner) => (inner as { type: string }).type !== 'tool_reference');
      return { ...block, content: kept.length > 0 ? kept : [{ type: 'text' as const, text: '[Tool references removed - tool search not enabled]' }] };
    });
    return { ...message, content } as MessageParam;
  });
}

function hasToolReference(message: MessageParam): boolean {
  return (
    message.role === 'user' &&
    Array.isArray(message.content) &&
    message.content.some(
      (b) => b.type === 'tool_result' && Array.isArray(b.content) && b.content.some((i) => (i as { type: string }).type === 'tool_reference'),
    )
  );
}
