import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, apiFetch, authHeaders, must, type Message, type PendingPermission, type Session } from './api.ts';
import { followTurn } from './sse.ts';
import { emptyTurn, reduceTurn, type TurnState } from './turn-state.ts';

/** Every page of a session's message log. */
async function loadMessages(id: string): Promise<Message[]> {
  const all: Message[] = [];
  let cursor: string | undefined;
  do {
    const page = must(await api.GET('/v1/sessions/{id}/messages', { params: { path: { id }, query: { limit: 200, ...(cursor ? { cursor } : {}) } } }));
    all.push(...page.messages);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/**
 * A session page's data: the session, its stored log, its pending approvals, and the turn
 * streaming now (followed over SSE with reconnects; the log reloads when it ends).
 */
export function useSession(id: string) {
  const [session, setSession] = useState<Session | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [pending, setPending] = useState<PendingPermission[]>([]);
  const [live, setLive] = useState<TurnState | null>(null);
  const [connection, setConnection] = useState<'live' | 'reconnecting'>('live');
  const [error, setError] = useState<string | null>(null);
  const following = useRef<AbortController | null>(null);

  // The stored log now holds the turn: the live view steps aside (its timeline stays), in the
  // same render that shows the log, so the turn is never on the page twice.
  const settle = () => setLive((t) => t && { ...t, settled: true });
  /** Reloads the session, its log and what waits, shown in one render (`settleLive`: the live view steps aside in it too). */
  const refresh = useCallback(
    async (opts?: { settleLive?: boolean }) => {
      try {
        const s = must(await api.GET('/v1/sessions/{id}', { params: { path: { id } } }));
        const stored = await loadMessages(id);
        const p = must(await api.GET('/v1/sessions/{id}/permissions', { params: { path: { id } } }));
        setSession(s);
        setMessages(stored);
        // Questions and plans have their own cards (the session's `questions`, `plans`); here only permission asks.
        setPending(p.pending.filter((x) => x.decision === null && x.kind !== 'question' && x.kind !== 'plan'));
        if (opts?.settleLive) settle();
        return s;
      } catch (err) {
        setError((err as Error).message);
        if (opts?.settleLive) settle();
        return null;
      }
    },
    [id],
  );

  const follow = useCallback(
    (start: (() => Promise<Response>) | { turnId: string }) => {
      following.current?.abort();
      const ctrl = new AbortController();
      following.current = ctrl;
      setLive(emptyTurn());
      setConnection('live');
      followTurn(id, start, { onEvent: (e) => setLive((t) => reduceTurn(t ?? emptyTurn(), e)), onConnection: setConnection, signal: ctrl.signal })
        .catch((err: Error) => ctrl.signal.aborted || setError(err.message))
        .finally(() => ctrl.signal.aborted || refresh({ settleLive: true }));
    },
    [id, refresh],
  );

  useEffect(() => {
    void refresh().then((s) => s?.currentTurnId && s.status === 'running' && follow({ turnId: s.currentTurnId }));
    return () => following.current?.abort();
  }, [id]);

  const sendPrompt = (prompt: string) =>
    follow(() =>
      apiFetch(`/v1/sessions/${encodeURIComponent(id)}/turns`, {
        method: 'POST',
        headers: authHeaders({ 'content-type': 'application/json', accept: 'text/event-stream' }),
        body: JSON.stringify({ prompt }),
      }),
    );

  const interrupt = async () => {
    const turnId = live?.turnId ?? session?.currentTurnId;
    if (!turnId) return;
    const r = await api.POST('/v1/sessions/{id}/turns/{turnId}/interrupt', { params: { path: { id, turnId } } });
    if (!r.response.ok) setError((r.error as { error?: { message?: string } })?.error?.message ?? `HTTP ${r.response.status}`);
  };

  /** A permission answer's response: the resumed turn as SSE, or JSON saying what still waits. */
  const answered = (res: Response) => {
    if (res.headers.get('content-type')?.includes('text/event-stream')) follow(() => Promise.resolve(res));
    else void refresh();
  };

  return { session, messages, pending, live, connection, error, setError, sendPrompt, interrupt, answered, refresh };
}
