import { useEffect, useState } from 'preact/hooks';
import { api, must, type Session } from '../api.ts';
import { formatCost, formatTokens, timeAgo } from '../format.ts';
import { sessionHref } from '../route.ts';
import { NewSessionForm } from './new-session-form.tsx';
import { FirstPrompt, StatusBadge } from './session-bits.tsx';

const PAGE = 20;

/** The tenant's sessions, most recently active first (as the Last activity column reads), a page at a time (the API's cursors; Back returns to the previous page). */
export function SessionsPage() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<{ sessions: Session[]; nextCursor: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState('all');
  const cursor = cursors.at(-1);
  useEffect(() => {
    setPage(null);
    api
      .GET('/v1/sessions', { params: { query: { limit: PAGE, order: 'activity', ...(cursor ? { cursor } : {}) } } })
      .then((r) => setPage(must(r)))
      .catch((err: Error) => setError(err.message));
  }, [cursor]);
  const shown = page?.sessions.filter((s) => filter === 'all' || s.status === filter || (filter === 'github' && s.source?.kind === 'github')) ?? [];
  return (
    <>
      <h1>Sessions</h1>
      <NewSessionForm />
      <div class="row" style="margin-top:12px">
        <div>
          <label for="filter">Show</label>
          <select id="filter" value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
            <option value="all">All sessions</option>
            <option value="running">Running</option>
            <option value="awaiting_permission">Awaiting approval</option>
            <option value="awaiting_answer">Awaiting your answer</option>
            <option value="idle">Idle</option>
            <option value="failed">Failed</option>
            <option value="github">From GitHub</option>
          </select>
        </div>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!page && !error && <p aria-live="polite">Loading…</p>}
      {page && <SessionTable sessions={shown} />}
      {page && shown.length === 0 && <p class="muted">No sessions {filter === 'all' ? 'yet' : 'match on this page'}.</p>}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!page?.nextCursor} onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}>
          Older
        </button>
      </nav>
    </>
  );
}

function SessionTable({ sessions }: { sessions: Session[] }) {
  if (sessions.length === 0) return null;
  return (
    <table>
      <caption class="sr-only">Sessions</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Session</th>
          <th scope="col" class="hide-narrow">
            Source
          </th>
          <th scope="col">Last activity</th>
          <th scope="col" class="hide-narrow">
            Tokens
          </th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={s.id}>
            <td>
              <StatusBadge status={s.status} />
            </td>
            <td>
              <a href={sessionHref(s.id)}>{s.title ?? <FirstPrompt id={s.id} />}</a>
              <div class="muted">
                <small>{s.id}</small>
              </div>
            </td>
            <td class="hide-narrow">{sourceText(s)}</td>
            <td title={s.updatedAt}>{timeAgo(s.updatedAt)}</td>
            <td class="hide-narrow">{formatTokens(s.usage)}</td>
            <td>{formatCost(s.usage.costUsd)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function sourceText(s: Session) {
  if (s.source?.kind === 'github')
    return (
      <a href={s.source.url} rel="noreferrer">
        {s.source.repository}#{s.source.number}
      </a>
    );
  return 'API';
}
