import { cliFetch, UnreachableError } from './http.ts';
import { createParser } from 'eventsource-parser';
import type { components } from './generated/api.d.ts';
import { apiError, type Api } from './client.ts';

export type TurnEvent = components['schemas']['TurnEvent'];

/** Reads one SSE response to its end, handing each event (with its id) on. Returns the last id seen. */
export async function readEvents(
  res: Response,
  onEvent: (event: TurnEvent, id: string | undefined) => void | Promise<void>,
  lastId?: string,
): Promise<string | undefined> {
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  if (!res.body) return lastId;
  const queue: { event: TurnEvent; id?: string }[] = [];
  const parser = createParser({
    onEvent: (message) => {
      queue.push({ event: JSON.parse(message.data) as TurnEvent, id: message.id });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const item of queue.splice(0)) {
      if (item.id !== undefined) lastId = item.id;
      await onEvent(item.event, item.id);
    }
  }
  return lastId;
}

/**
 * Follows a turn's events until `turn_end`: reconnects with `Last-Event-ID` when the stream ends
 * early (a dropped connection, or a server invocation that ended with `turn_continued`).
 */
export async function followEvents(
  client: Api,
  sessionId: string,
  turnId: string,
  onEvent: (event: TurnEvent) => void | Promise<void>,
  lastId?: string,
): Promise<void> {
  let ended = false;
  for (let attempt = 0; !ended; attempt++) {
    const url = `${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`;
    try {
      const res = await cliFetch(url, {
        headers: { authorization: `Bearer ${client.token}`, accept: 'text/event-stream', ...(lastId !== undefined ? { 'last-event-id': lastId } : {}) },
      });
      lastId = await readEvents(
        res,
        async (event) => {
          if (event.type === 'turn_end') ended = true;
          if (event.type !== 'turn_continued') await onEvent(event);
        },
        lastId,
      );
      attempt = 0;
    } catch (err) {
      // An HTTP error is final; a dropped connection (mid-stream, or on reconnecting) is retried a few times.
      if (!(err instanceof TypeError || err instanceof UnreachableError) || attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }
}
