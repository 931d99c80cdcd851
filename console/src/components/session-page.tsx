import { useEffect, useState } from 'preact/hooks';
import { formatCost, formatTokens, timeAgo } from '../format.ts';
import { useSession } from '../use-session.ts';
import { ApprovalCard } from './approval-card.tsx';
import { BudgetEditor } from './budget-editor.tsx';
import { Budgets } from './budgets.tsx';
import { LiveTurn } from './live-turn.tsx';
import { MessageLog } from './message-log.tsx';
import { PromptBox } from './prompt-box.tsx';
import { QuestionCard } from './question-card.tsx';
import { PlanCard } from './plan-card.tsx';
import { StatusBadge } from './session-bits.tsx';
import { SetupSteps } from './setup-steps.tsx';
import { StoredTimeline } from './stored-timeline.tsx';
import { TaskList } from './task-list.tsx';
import { Timeline } from './timeline.tsx';
import { WorkspaceFiles } from './workspace-files.tsx';
import { turnChoices, WorkspaceDiff } from './workspace-diff.tsx';

/** One session: its log, the turn streaming now, approvals, the prompt box, interrupt, budgets. */
export function SessionPage({ id }: { id: string }) {
  const s = useSession(id);
  const now = useTicker(s.live !== null && !s.live.end);
  if (!s.session)
    return s.error ? (
      <p role="alert" class="error">
        {s.error}
      </p>
    ) : (
      <p aria-live="polite">Loading…</p>
    );
  const session = s.session;
  const running = (s.live !== null && !s.live.end) || session.status === 'running';
  const questions = session.questions ?? [];
  const plans = session.plans ?? [];
  // A session that waits only for answers to the agent's questions says so, rather than "approval".
  const waitingOnlyForAnswers = session.status === 'awaiting_permission' && questions.length > 0 && s.pending.length === 0 && plans.length === 0;
  const status = s.live && !s.live.end ? 'running' : waitingOnlyForAnswers ? 'awaiting_answer' : session.status;
  return (
    <>
      <h1>
        {session.title ?? 'Session'} <StatusBadge status={status} />
      </h1>
      <p class="muted">
        <code>{session.id}</code> · {session.turnCount} turns · {formatTokens(session.usage)} · {formatCost(session.usage.costUsd)} · updated{' '}
        <span title={session.updatedAt}>{timeAgo(session.updatedAt)}</span>
        {session.lastTurn && (
          <>
            {' '}
            · last turn: <span data-testid="last-stop">{session.lastTurn.stopReason}</span>
          </>
        )}
      </p>
      {s.error && (
        <p role="alert" class="error">
          {s.error}{' '}
          <button type="button" onClick={() => s.setError(null)}>
            Dismiss
          </button>
        </p>
      )}
      {s.pending.length > 0 && (
        <section aria-labelledby="pending-h">
          <h2 id="pending-h">Waiting for your approval</h2>
          {s.pending.map((p) => (
            <ApprovalCard key={p.toolUseId} sessionId={id} pending={p} onAnswered={s.answered} />
          ))}
        </section>
      )}
      {questions.length > 0 && (
        <section aria-labelledby="questions-h">
          <h2 id="questions-h">Waiting for your answer</h2>
          {questions.map((q) => (
            <QuestionCard key={q.toolUseId} sessionId={id} toolUseId={q.toolUseId} questions={q.questions} expiresAt={q.expiresAt} onAnswered={s.answered} />
          ))}
        </section>
      )}
      {plans.length > 0 && (
        <section aria-labelledby="plans-h">
          <h2 id="plans-h">Waiting for your approval of a plan</h2>
          {plans.map((p) => (
            <PlanCard key={p.toolUseId} sessionId={id} toolUseId={p.toolUseId} plan={p.plan} onAnswered={s.answered} />
          ))}
        </section>
      )}
      <SetupSteps setup={session.setup} />
      <TaskList todos={s.live?.todos ?? session.todos} />
      <section aria-labelledby="log-h">
        <h2 id="log-h">Conversation</h2>
        {s.messages.length === 0 && !s.live && <p class="muted">No turns yet. Send a prompt below.</p>}
        <MessageLog sessionId={id} messages={s.messages} waiting={new Set([...s.pending, ...questions, ...plans].map((p) => p.toolUseId))} />
        {s.live && !s.live.settled && <LiveTurn turn={s.live} connection={s.connection} />}
      </section>
      <PromptBox
        running={running}
        disabled={s.pending.length > 0 || questions.length > 0 || plans.length > 0}
        onSend={s.sendPrompt}
        onInterrupt={s.interrupt}
      />
      {s.live ? <Timeline turn={s.live} now={now} /> : <StoredTimeline messages={s.messages} />}
      <div class="panel">
        <Budgets session={session} />
        <BudgetEditor key={session.updatedAt} session={session} onSaved={() => void s.refresh()} />
      </div>
      <WorkspaceFiles sessionId={id} version={session.workspace.version} />
      <WorkspaceDiff sessionId={id} version={session.workspace.version} turns={turnChoices(s.messages)} />
    </>
  );
}

/** Re-renders every half second while a turn runs, so running spans in the timeline grow. */
function useTicker(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [active]);
  return active ? now : Date.now();
}
