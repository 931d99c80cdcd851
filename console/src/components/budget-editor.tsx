import { useState } from 'preact/hooks';
import { api, must, type Session } from '../api.ts';
import { BUDGET_LABELS } from './budgets.tsx';

/** The kinds the API takes (functions/stores/budgets.ts), whole numbers but the cost. */
const KINDS = ['maxCostUsd', 'maxTurns', 'maxTokens', 'maxModelCallsPerTurn', 'maxWallSecondsPerTurn'] as const;
type Kind = (typeof KINDS)[number];

/**
 * Changes the session's budgets (PATCH, which a running turn sees at its next heartbeat). A field
 * left empty removes the session's own limit: the deployment's default, if any, applies again.
 */
export function BudgetEditor({ session, onSaved }: { session: Session; onSaved: (s: Session) => void }) {
  const current = (kind: Kind) => {
    const limit = (session.budgets as Record<string, { limit: number | null } | undefined> | null)?.[kind]?.limit;
    return limit === null || limit === undefined ? '' : String(limit);
  };
  const [values, setValues] = useState<Record<Kind, string>>(() => Object.fromEntries(KINDS.map((k) => [k, current(k)])) as Record<Kind, string>);
  const [status, setStatus] = useState<{ error?: string; saved?: boolean }>({});
  const save = async (e: Event) => {
    e.preventDefault();
    setStatus({});
    const budgets = Object.fromEntries(KINDS.map((k) => [k, values[k].trim() === '' ? null : Number(values[k])]));
    try {
      onSaved(must(await api.PATCH('/v1/sessions/{id}', { params: { path: { id: session.id } }, body: { budgets } as never })));
      setStatus({ saved: true });
    } catch (err) {
      setStatus({ error: (err as Error).message });
    }
  };
  return (
    <details>
      <summary>Edit budgets</summary>
      <form onSubmit={save} aria-label="Edit budgets">
        <div class="row">
          {KINDS.map((k) => (
            <div key={k}>
              <label for={`bud-${k}`}>{BUDGET_LABELS[k]}</label>
              <input
                id={`bud-${k}`}
                type="number"
                min={k === 'maxCostUsd' ? '0.0001' : '1'}
                step={k === 'maxCostUsd' ? 'any' : '1'}
                placeholder="no limit of its own"
                value={values[k]}
                onInput={(ev) => setValues({ ...values, [k]: ev.currentTarget.value })}
              />
            </div>
          ))}
        </div>
        <p class="muted">
          Empty: no limit of the session's own (the deployment's default, if any, applies). A running turn sees the change at its next heartbeat.
        </p>
        {status.error && (
          <p role="alert" class="error">
            {status.error}
          </p>
        )}
        {status.saved && <p role="status">Budgets saved.</p>}
        <button type="submit" class="primary">
          Save budgets
        </button>
      </form>
    </details>
  );
}
