import { useState } from 'preact/hooks';
import type { Schemas } from '../api.ts';
import { useSendAnswer } from './send-answer.ts';

type Question = Schemas['AskedQuestion'];

/** What the person picked for one question: option labels, and their own words. */
interface Picked {
  labels: string[];
  other: string;
}

/** The request body: labels per question (one for a single choice), and the person's own words where given. */
function answerBody(questions: Question[], picked: Record<string, Picked>): Record<string, unknown> {
  const answers: Record<string, string | string[]> = {};
  const other: Record<string, string> = {};
  for (const q of questions) {
    const p = picked[q.question] ?? { labels: [], other: '' };
    if (p.other.trim()) other[q.question] = p.other.trim();
    if (p.labels.length > 0) answers[q.question] = q.multiSelect ? p.labels : p.labels[0]!;
  }
  return { answers, ...(Object.keys(other).length > 0 ? { other } : {}) };
}

/** The agent's question (AskUserQuestion): each question's options as large choices, an "Other" field, Answer or Decline (usable on a phone). */
export function QuestionCard(props: { sessionId: string; toolUseId: string; questions: Question[]; expiresAt?: string; onAnswered: (res: Response) => void }) {
  const [picked, setPicked] = useState<Record<string, Picked>>({});
  const { busy, error, send } = useSendAnswer(props.onAnswered);
  const base = `q-${props.toolUseId}`;
  const change = (q: Question, next: Partial<Picked>) =>
    setPicked((all) => ({ ...all, [q.question]: { ...(all[q.question] ?? { labels: [], other: '' }), ...next } }));
  const toggle = (q: Question, label: string, on: boolean) => {
    const labels = picked[q.question]?.labels ?? [];
    // A single choice is either an option or the person's own words.
    if (!q.multiSelect) return change(q, { labels: on ? [label] : [], other: '' });
    change(q, { labels: on ? [...labels, label] : labels.filter((l) => l !== label) });
  };
  const path = `/v1/sessions/${encodeURIComponent(props.sessionId)}/questions/${encodeURIComponent(props.toolUseId)}`;
  const submit = () => send(`${path}/answer`, () => answerBody(props.questions, picked));
  // Declining tells the agent the question was rejected; it goes on without an answer.
  const decline = () => send(`${path}/decline`, () => ({}));
  return (
    <article class="approval question" aria-labelledby={`${base}-h`}>
      <h3 id={`${base}-h`} style="margin:0">
        The agent asks
      </h3>
      {props.expiresAt && <p class="muted">It goes on without an answer at {new Date(props.expiresAt).toLocaleString()}.</p>}
      {props.questions.map((q, i) => (
        <fieldset key={q.question} class="choices">
          <legend>
            <span class="chip">{q.header}</span> {q.question}
          </legend>
          {q.options.map((o) => (
            <label key={o.label} class="choice">
              <input
                type={q.multiSelect ? 'checkbox' : 'radio'}
                name={`${base}-${i}`}
                checked={picked[q.question]?.labels.includes(o.label) ?? false}
                onChange={(e) => toggle(q, o.label, e.currentTarget.checked)}
              />
              <span>
                <strong>{o.label}</strong> <span class="muted">{o.description}</span>
              </span>
            </label>
          ))}
          <label for={`${base}-${i}-other`}>Other (your own words)</label>
          <input
            id={`${base}-${i}-other`}
            value={picked[q.question]?.other ?? ''}
            onInput={(e) => change(q, { other: e.currentTarget.value, ...(q.multiSelect ? {} : { labels: [] }) })}
          />
        </fieldset>
      ))}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={submit}>
          Answer
        </button>
        <button type="button" disabled={busy} onClick={decline}>
          Decline
        </button>
      </div>
    </article>
  );
}
