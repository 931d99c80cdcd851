import { useState } from 'preact/hooks';
import { useSendAnswer } from './send-answer.ts';

type Mode = 'default' | 'acceptEdits';

/**
 * The agent's plan (ExitPlanMode) to approve: the plan as an editable text (approving sends the
 * edit only when there is one), the mode to continue in, and a reject with what to change.
 */
export function PlanCard(props: { sessionId: string; toolUseId: string; plan: string; onAnswered: (res: Response) => void }) {
  const [text, setText] = useState(props.plan);
  const [mode, setMode] = useState<Mode>('default');
  const [feedback, setFeedback] = useState('');
  const { busy, error, send } = useSendAnswer(props.onAnswered);
  const base = `plan-${props.toolUseId}`;
  const path = `/v1/sessions/${encodeURIComponent(props.sessionId)}/plans/${encodeURIComponent(props.toolUseId)}`;
  const approve = () => send(path, () => ({ decision: 'approve', mode, ...(text !== props.plan && text.trim() ? { plan: text } : {}) }));
  const reject = () => send(path, () => ({ decision: 'reject', ...(feedback.trim() ? { feedback: feedback.trim() } : {}) }));
  return (
    <article class="approval plan" aria-labelledby={`${base}-h`}>
      <h3 id={`${base}-h`} style="margin:0">
        The agent's plan
      </h3>
      <label for={`${base}-text`}>Plan (edit it before approving if you like)</label>
      <textarea id={`${base}-text`} rows={10} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <fieldset class="choices">
        <legend>Then continue</legend>
        <label class="choice">
          <input type="radio" name={`${base}-mode`} checked={mode === 'default'} onChange={() => setMode('default')} />
          <span>asking before edits and commands</span>
        </label>
        <label class="choice">
          <input type="radio" name={`${base}-mode`} checked={mode === 'acceptEdits'} onChange={() => setMode('acceptEdits')} />
          <span>accepting file edits</span>
        </label>
      </fieldset>
      <label for={`${base}-feedback`}>What to change (when rejecting)</label>
      <input id={`${base}-feedback`} value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={approve}>
          Approve plan
        </button>
        <button type="button" disabled={busy} onClick={reject}>
          Keep planning
        </button>
      </div>
    </article>
  );
}
