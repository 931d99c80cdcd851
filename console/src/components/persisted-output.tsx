import { useState } from 'preact/hooks';
import { authHeaders, errorText } from '../api.ts';

/** `Full output saved to: /workspace/.stratus/tool-results/<id>.txt` in a `<persisted-output>` preview. */
const SAVED_TO = /^<persisted-output>\nOutput too large \(([^)]+)\)\. Full output saved to: \S*\/tool-results\/([A-Za-z0-9_-]{1,128})\.(?:txt|json)\n/;

/** The tool_use id and size a persisted result's preview names, or undefined for any other result. */
export function persistedResultOf(result: string | undefined): { toolUseId: string; size: string } | undefined {
  const m = result === undefined ? null : SAVED_TO.exec(result);
  return m ? { toolUseId: m[2]!, size: m[1]! } : undefined;
}

/**
 * A result too large for the conversation was stored whole and the log holds a preview:
 * this fetches the whole of it from the API on request.
 */
export function PersistedOutput({ sessionId, toolUseId, size }: { sessionId: string; toolUseId: string; size: string }) {
  const [state, setState] = useState<{ text?: string; error?: string; busy?: boolean }>({});
  const open = async () => {
    setState({ busy: true });
    const res = await fetch(`/v1/sessions/${encodeURIComponent(sessionId)}/tool-results/${encodeURIComponent(toolUseId)}`, { headers: authHeaders() });
    if (!res.ok) return setState({ error: errorText(await res.json().catch(() => undefined), res) });
    setState({ text: await res.text() });
  };
  if (state.text !== undefined) {
    return (
      <figure aria-label="Full output" style="margin:0">
        <figcaption class="muted">Full output ({size})</figcaption>
        <pre tabIndex={0}>{state.text}</pre>
      </figure>
    );
  }
  return (
    <p>
      <button type="button" onClick={open} disabled={state.busy}>
        Open the full output ({size})
      </button>
      {state.error && (
        <span role="alert" class="error">
          {' '}
          {state.error}
        </span>
      )}
    </p>
  );
}
