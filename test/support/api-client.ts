import type { TurnEvent } from '../../functions/stores/turn-event.ts';

/** A tiny client for the HTTP API, as an outside caller would use it. */
export function apiClient(baseUrl: string, token: string) {
  const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });
  return {
    async request(method: string, path: string, body?: unknown, extra?: Record<string, string>) {
      const res = await fetch(`${baseUrl}${path}`, { method, headers: headers(extra), body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text, headers: res.headers };
    },
    async createSession(files?: Record<string, string | { base64: string }>): Promise<string> {
      const res = await this.request('POST', '/v1/sessions', files ? { files } : {});
      if (res.status !== 201) throw new Error(`create session: ${res.status} ${res.text}`);
      return res.json.id as string;
    },
    /** Runs a turn with JSON response. */
    async turn(sessionId: string, prompt: string) {
      return this.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt });
    },
    /** Runs a turn over SSE and returns the parsed events. */
    async turnSse(sessionId: string, prompt: string): Promise<{ status: number; events: TurnEvent[] }> {
      const res = await fetch(`${baseUrl}/v1/sessions/${sessionId}/turns`, {
        method: 'POST',
        headers: headers({ accept: 'text/event-stream' }),
        body: JSON.stringify({ prompt }),
      });
      if (res.status !== 200) return { status: res.status, events: [] };
      return { status: res.status, events: parseSse(await res.text()) };
    },
    async messages(sessionId: string) {
      const all: any[] = [];
      let cursor: string | null = null;
      do {
        const res = await this.request('GET', `/v1/sessions/${sessionId}/messages?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        if (res.status !== 200) throw new Error(`messages: ${res.status} ${res.text}`);
        all.push(...res.json.messages);
        cursor = res.json.nextCursor;
      } while (cursor);
      return all;
    },
  };
}

/** One SSE event as it arrived: its id and parsed data. */
export type LiveEvent = { id: number; event: { type: string; [key: string]: unknown } };

/**
 * Reads an SSE response as it arrives, until `until` says stop or the stream ends; `until` is
 * asked before each read, so it can also check each batch as it lands. With `cancel`, the
 * connection is dropped afterwards (a client going away).
 */
export async function readLive(
  res: Response,
  until: (events: LiveEvent[]) => boolean | Promise<boolean>,
  opts: { cancel?: boolean } = {},
): Promise<LiveEvent[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: LiveEvent[] = [];
  let text = '';
  while (!(await until(events))) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = text.indexOf('\n\n')) >= 0) {
      const chunk = text.slice(0, cut);
      text = text.slice(cut + 2);
      const id = /^id: (\d+)$/m.exec(chunk)?.[1];
      const data = /^data: (.*)$/m.exec(chunk)?.[1];
      if (id !== undefined && data) events.push({ id: Number(id), event: JSON.parse(data) });
    }
  }
  if (opts.cancel) await reader.cancel();
  return events;
}

export function parseSse(text: string): TurnEvent[] {
  const events: TurnEvent[] = [];
  for (const chunk of text.split('\n\n')) {
    const data = chunk
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) events.push(JSON.parse(data) as TurnEvent);
  }
  return events;
}
