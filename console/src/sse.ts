import { createParser } from 'eventsource-parser';
import { authHeaders, errorText, type TurnEvent } from './api.ts';

export interface Follow {
  /** Called with each event in order, exactly once each (reconnects resume after the last id). */
  onEvent: (event: TurnEvent) => void;
  /** Called when the connection dropped and the console is reconnecting, and when it is back. */
  onConnection?: (state: 'reconnecting' | 'live') => void;
  signal?: AbortSignal;
}

/** Reads one SSE response, handing events on; returns the last event id and whether turn_end came. */
async function readStream(res: Response, follow: Follow, state: { lastId?: string; turnId?: string; ended: boolean }): Promise<void> {
  if (!res.ok) throw new Error(errorText(await res.json().catch(() => undefined), res));
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const parser = createParser({
    onEvent: (message) => {
      const event = JSON.parse(message.data) as TurnEvent;
      if (message.id !== undefined) state.lastId = message.id;
      if (event.type === 'turn_start') state.turnId = event.turnId;
      if (event.type === 'turn_end') state.ended = true;
      if (event.type !== 'turn_continued') follow.onEvent(event);
    },
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}

/**
 * Follows a turn to its `turn_end`: first the response that started it (POST …/turns or a
 * permission answer, both SSE), then, whenever the stream ends early (a dropped connection, or a
 * Lambda invocation that ended with `turn_continued`), GET …/events with `Last-Event-ID`.
 */
export async function followTurn(sessionId: string, start: (() => Promise<Response>) | { turnId: string }, follow: Follow): Promise<void> {
  const state: { lastId?: string; turnId?: string; ended: boolean } = { ended: false, turnId: typeof start === 'function' ? undefined : start.turnId };
  let first = typeof start === 'function' ? start : undefined;
  for (let attempt = 0; !state.ended && !follow.signal?.aborted; ) {
    try {
      const res = first ? await first() : await fetch(eventsUrl(sessionId, state), { headers: authHeaders(eventHeaders(state.lastId)), signal: follow.signal });
      first = undefined;
      if (attempt > 0) follow.onConnection?.('live');
      await readStream(res, follow, state);
      attempt = 0;
    } catch (err) {
      // An answer from the API is final; a dropped connection is retried with a growing pause.
      if (follow.signal?.aborted || !(err instanceof TypeError) || !state.turnId || attempt >= 8) throw err;
    }
    if (!state.ended && !state.turnId) throw new Error('The stream ended before the turn started.');
    if (!state.ended && !follow.signal?.aborted) {
      follow.onConnection?.('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, Math.min(8_000, 250 * 2 ** attempt++)));
    }
  }
}

const eventsUrl = (sessionId: string, state: { turnId?: string }) =>
  `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(state.turnId!)}/events`;

const eventHeaders = (lastId: string | undefined): Record<string, string> => ({
  accept: 'text/event-stream',
  ...(lastId !== undefined ? { 'last-event-id': lastId } : {}),
});
