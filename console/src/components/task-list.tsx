import type { Schemas } from '../api.ts';

/** The agent's task list (TodoWrite) as a checklist: done entries ticked, the one in progress by its active form. */
export function TaskList({ todos }: { todos: Schemas['TodoItem'][] }) {
  if (todos.length === 0) return null;
  const done = todos.filter((t) => t.status === 'completed').length;
  return (
    <section aria-labelledby="todos-h" class="panel task-list">
      <h2 id="todos-h">
        Task list{' '}
        <span class="muted">
          ({done} of {todos.length} done)
        </span>
      </h2>
      <ul>
        {todos.map((t, i) => (
          <li key={i} data-status={t.status}>
            <input type="checkbox" checked={t.status === 'completed'} disabled aria-label={`${t.content}: ${t.status.replace('_', ' ')}`} />
            <span>{t.status === 'in_progress' ? <strong>{t.activeForm}</strong> : t.content}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
