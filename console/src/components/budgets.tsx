import type { Session } from '../api.ts';

export const BUDGET_LABELS: Record<string, string> = {
  maxCostUsd: 'Cost (USD)',
  maxTurns: 'Turns',
  maxTokens: 'Tokens',
  maxModelCallsPerTurn: 'Model calls per turn',
  maxWallSecondsPerTurn: 'Seconds per turn',
};

const show = (n: number | null, kind: string) => (n === null ? '—' : kind === 'maxCostUsd' ? n.toFixed(4) : String(n));

/** Each budget's limit, what is spent and what is left. */
export function Budgets({ session }: { session: Session }) {
  const entries = Object.entries(session.budgets ?? {});
  return (
    <table class="budgets">
      <caption class="muted" style="text-align:left">
        Budgets
      </caption>
      <thead>
        <tr>
          <th scope="col">Budget</th>
          <th scope="col">Limit</th>
          <th scope="col">Spent</th>
          <th scope="col">Left</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([kind, b]) => (
          <tr key={kind}>
            <th scope="row">{BUDGET_LABELS[kind] ?? kind}</th>
            <td>{b.limit === null ? 'no limit' : show(b.limit, kind)}</td>
            <td>{show(b.spent, kind)}</td>
            <td>{show(b.left, kind)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
