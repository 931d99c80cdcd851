import { useState } from 'preact/hooks';
import type { PendingPermission } from '../api.ts';
import { describeInput } from '../format.ts';
import { useSendAnswer } from './send-answer.ts';

/** One pending approval: what the call would do, and large Allow / Deny buttons (usable on a phone). */
export function ApprovalCard(props: { sessionId: string; pending: PendingPermission; onAnswered: (res: Response) => void }) {
  const p = props.pending;
  const [remember, setRemember] = useState<'no' | 'call' | 'rule'>('no');
  // The server drafts it: only it can split a Bash command the way its rules are matched.
  const [rule, setRule] = useState(() => p.suggestedRule);
  const [message, setMessage] = useState('');
  const [edited, setEdited] = useState<string | null>(null);
  const { busy, error, send } = useSendAnswer(props.onAnswered);
  const base = `ap-${p.toolUseId}`;
  const body = (decision: 'allow' | 'deny') => {
    const answer: Record<string, unknown> = { decision };
    if (decision === 'allow' && remember === 'call') answer.remember = true;
    if (decision === 'allow' && remember === 'rule') answer.rule = rule.trim();
    if (decision === 'allow' && edited !== null) answer.updatedInput = JSON.parse(edited);
    if (decision === 'deny' && message.trim()) answer.message = message.trim();
    return answer;
  };
  const answer = (decision: 'allow' | 'deny') =>
    send(`/v1/sessions/${encodeURIComponent(props.sessionId)}/permissions/${encodeURIComponent(p.toolUseId)}`, () => body(decision));
  return (
    <article class="approval" aria-labelledby={`${base}-h`}>
      <h3 id={`${base}-h`} style="margin:0">
        {p.toolName} wants to run
      </h3>
      {p.message && <p class="muted">{p.message}</p>}
      <pre>{describeInput(p.toolName, p.input)}</pre>
      <details>
        <summary>Edit input or add a message</summary>
        <label for={`${base}-input`}>Input to run instead (JSON)</label>
        <textarea id={`${base}-input`} rows={4} value={edited ?? JSON.stringify(p.input ?? {}, null, 2)} onInput={(e) => setEdited(e.currentTarget.value)} />
        <label for={`${base}-msg`}>Message to the model if denied</label>
        <input id={`${base}-msg`} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      </details>
      <fieldset class="remember">
        <legend>When allowed</legend>
        <label>
          <input type="radio" name={`${base}-rem`} checked={remember === 'no'} onChange={() => setRemember('no')} /> Ask again next time
        </label>
        <label>
          <input type="radio" name={`${base}-rem`} checked={remember === 'call'} onChange={() => setRemember('call')} /> Allow this exact call again in this
          session
        </label>
        <label>
          <input type="radio" name={`${base}-rem`} checked={remember === 'rule'} onChange={() => setRemember('rule')} /> Allow everything this rule matches in
          this session:
        </label>
        <input
          id={`${base}-rule`}
          aria-label="Permission rule to remember"
          value={rule}
          disabled={remember !== 'rule'}
          onInput={(e) => setRule(e.currentTarget.value)}
        />
      </fieldset>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => answer('allow')}>
          Allow
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => answer('deny')}>
          Deny
        </button>
      </div>
    </article>
  );
}
