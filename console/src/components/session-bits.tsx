import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';

const LABELS: Record<string, string> = { awaiting_permission: 'awaiting approval', awaiting_answer: 'awaiting your answer' };

export function StatusBadge({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{LABELS[status] ?? status}</span>;
}

/** An untitled session is named by its first prompt (the first message of its log). */
export function FirstPrompt({ id }: { id: string }) {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    void api.GET('/v1/sessions/{id}/messages', { params: { path: { id }, query: { limit: 1 } } }).then(({ data }) => {
      const block = data?.messages[0]?.content.find((b) => b.type === 'text') as { text?: string } | undefined;
      setText(block?.text ?? '');
    });
  }, [id]);
  if (text === null) return <span class="muted">…</span>;
  return <span>{text ? text.length > 80 ? `${text.slice(0, 80)}…` : text : <em>untitled session</em>}</span>;
}
