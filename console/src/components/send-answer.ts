import { useState } from 'preact/hooks';
import { apiFetch, authHeaders, errorText } from '../api.ts';

/**
 * POSTs a person's answer to what waits for them (a call to approve, a question). The answer that
 * settles the last waiting item resumes the turn in the same request; asking for SSE lets the
 * caller stream it.
 */
export async function postAnswer(path: string, body: Record<string, unknown>): Promise<Response> {
  const res = await apiFetch(path, {
    method: 'POST',
    headers: authHeaders({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(errorText(await res.json().catch(() => undefined), res));
  return res;
}

/**
 * One answer on its way from a card: busy while it is sent, the refusal's text if it fails (a body
 * that cannot be built, such as edited input that is not JSON, fails the same way); the response
 * goes to `onAnswered`.
 */
export function useSendAnswer(onAnswered: (res: Response) => void) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async (path: string, body: () => Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      onAnswered(await postAnswer(path, body()));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return { busy, error, send };
}
