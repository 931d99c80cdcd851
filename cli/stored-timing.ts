import { ok, type Api } from './client.ts';

/** When a tool call started and ended, in epoch ms, as the message log recorded it. */
export type CallTiming = { startedAt: number; endedAt?: number };

/**
 * The tool calls of one turn with their times from the message log: a call starts when the
 * model response that asked for it was stored and ends when its result was (the web console
 * measures stored calls the same way). Events carry no times, so a turn replayed by `attach`
 * arrives all at once and its calls would otherwise all seem to take no time.
 */
export async function storedCallTimings(client: Api, sessionId: string, turnId: string): Promise<Map<string, CallTiming>> {
  const timings = new Map<string, CallTiming>();
  let cursor: string | undefined;
  do {
    const page = ok(
      await client.api.GET('/v1/sessions/{id}/messages', { params: { path: { id: sessionId }, query: { limit: 200, ...(cursor ? { cursor } : {}) } } }),
    );
    for (const message of page.messages) {
      if (message.turnId !== turnId) continue;
      const at = Date.parse(message.createdAt);
      for (const block of message.content) {
        if (block.type === 'tool_use') timings.set(String(block.id), { startedAt: at });
        const started = block.type === 'tool_result' ? timings.get(String(block.tool_use_id)) : undefined;
        if (started) started.endedAt = at;
      }
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return timings;
}
