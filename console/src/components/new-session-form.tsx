import { useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api.ts';
import { sessionHref } from '../route.ts';

type Mode = NonNullable<NonNullable<Schemas['CreateSession']['settings']>['permissionMode']>;

/** Creates an empty session (title, permission mode, a cost budget) and opens it. */
export function NewSessionForm() {
  const [title, setTitle] = useState('');
  const [mode, setMode] = useState<Mode | ''>('');
  const [maxCost, setMaxCost] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const created = must(
        await api.POST('/v1/sessions', {
          body: {
            ...(title.trim() ? { title: title.trim() } : {}),
            ...(mode ? { settings: { permissionMode: mode } } : {}),
            ...(maxCost ? { budgets: { maxCostUsd: Number(maxCost) } } : {}),
          },
        }),
      );
      location.hash = sessionHref(created.id);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="new-session">
      <h2 id="new-session" style="margin-top:0">
        New session
      </h2>
      <div class="row">
        <div>
          <label for="ns-title">Title (optional)</label>
          <input id="ns-title" value={title} maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
        </div>
        <div>
          <label for="ns-mode">Permissions</label>
          <select id="ns-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode | '')}>
            <option value="">Server default</option>
            <option value="default">Ask before commands and edits</option>
            <option value="acceptEdits">Accept edits, ask before commands</option>
            <option value="bypassPermissions">Never ask (sandboxed)</option>
            <option value="plan">Plan only</option>
          </select>
        </div>
        <div>
          <label for="ns-cost">Cost budget, USD (optional)</label>
          <input id="ns-cost" type="number" min="0" step="0.01" inputMode="decimal" value={maxCost} onInput={(e) => setMaxCost(e.currentTarget.value)} />
        </div>
        <button type="submit" class="primary">
          Create session
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}
