import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { TurnHandle } from '../agent/turn.ts';
import type { TurnEvent } from '../agent/turn-events.ts';
import type { Deps } from '../deps/deps.ts';
import { errorMessage } from '../shared/errors.ts';

/**
 * Answers with a running turn: SSE while it runs when the client accepts `text/event-stream`,
 * otherwise JSON once it ends. Either way the turn runs to its end even if the client leaves.
 */
export async function respondWithTurn(c: Context, deps: Deps, turn: TurnHandle) {
  if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
    return streamSSE(c, async (stream) => {
      let clientGone = false;
      stream.onAbort(() => {
        clientGone = true;
      });
      let id = 0;
      for await (const event of turn.events.read()) {
        if (clientGone) continue;
        try {
          await stream.writeSSE({ id: String(id++), event: event.type, data: JSON.stringify(event) });
        } catch (err) {
          clientGone = true;
          deps.log.info('SSE client went away; the turn continues', { turnId: turn.turnId, error: errorMessage(err) });
        }
      }
      await turn.done;
    });
  }

  const collected: TurnEvent[] = [];
  for await (const event of turn.events.read()) if (event.type !== 'text_delta') collected.push(event);
  await turn.done;
  const end = collected.find((e) => e.type === 'turn_end');
  return c.json({
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    stopReason: end?.type === 'turn_end' ? end.stopReason : null,
    usage: end?.type === 'turn_end' ? end.usage : null,
    error: end?.type === 'turn_end' ? (end.error ?? null) : null,
    events: collected,
  });
}
