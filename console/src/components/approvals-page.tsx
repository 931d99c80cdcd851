import { useEffect, useState } from 'preact/hooks';
import { api, must, type PendingPermission, type Schemas, type Session } from '../api.ts';
import { sessionHref } from '../route.ts';
import { ApprovalCard } from './approval-card.tsx';
import { QuestionCard } from './question-card.tsx';
import { PlanCard } from './plan-card.tsx';

interface Waiting {
  session: Session;
  pending: PendingPermission[];
}

/** Every call waiting for an answer (a permission, the agent's question or its plan), across the newest 200 sessions: answer them from anywhere. */
export function ApprovalsPage() {
  const [waiting, setWaiting] = useState<Waiting[] | null>(null);
  const [resumed, setResumed] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    try {
      const { sessions } = must(await api.GET('/v1/sessions', { params: { query: { limit: 200, order: 'activity' } } }));
      const asking = sessions.filter((s) => s.status === 'awaiting_permission');
      const lists = await Promise.all(
        asking.map(async (session) => ({
          session,
          pending: must(await api.GET('/v1/sessions/{id}/permissions', { params: { path: { id: session.id } } })).pending.filter((p) => p.decision === null),
        })),
      );
      setWaiting(lists.filter((w) => w.pending.length > 0));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => void load(), []);
  /** The resumed turn runs on server-side whether or not anyone reads its stream. */
  const answered = (sessionId: string) => (res: Response) => {
    void res.body?.cancel();
    setResumed((r) => [...r, sessionId]);
    void load();
  };
  return (
    <>
      <h1>Approvals</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {resumed.length > 0 && (
        <p role="status">
          Answered.{' '}
          {resumed.map((id) => (
            <a key={id} href={sessionHref(id)}>
              Watch {id}{' '}
            </a>
          ))}
        </p>
      )}
      {!waiting && !error && <p aria-live="polite">Loading…</p>}
      {waiting?.length === 0 && <p class="muted">Nothing is waiting for an answer.</p>}
      {waiting?.map((w) => (
        <section key={w.session.id} aria-label={`Session ${w.session.title ?? w.session.id}`}>
          <h2>
            <a href={sessionHref(w.session.id)}>{w.session.title ?? w.session.id}</a>
          </h2>
          {w.pending.map((p) =>
            p.kind === 'question' ? (
              <QuestionCard
                key={p.toolUseId}
                sessionId={w.session.id}
                toolUseId={p.toolUseId}
                questions={(p.input as { questions: Schemas['AskedQuestion'][] }).questions}
                onAnswered={answered(w.session.id)}
              />
            ) : p.kind === 'plan' ? (
              <PlanCard
                key={p.toolUseId}
                sessionId={w.session.id}
                toolUseId={p.toolUseId}
                plan={String((p.input as { plan?: unknown }).plan ?? '')}
                onAnswered={answered(w.session.id)}
              />
            ) : (
              <ApprovalCard key={p.toolUseId} sessionId={w.session.id} pending={p} onAnswered={answered(w.session.id)} />
            ),
          )}
        </section>
      ))}
    </>
  );
}
