import type { ComponentChildren } from 'preact';
import { describeInput, formatDuration } from '../format.ts';
import { PersistedOutput, persistedResultOf } from './persisted-output.tsx';

export interface ToolCallProps {
  name: string;
  input: unknown;
  result?: string;
  isError?: boolean;
  durationMs?: number;
  progress?: string;
  waiting?: string;
  denied?: boolean;
  /** With it, a persisted result's preview offers the whole output. */
  sessionId?: string;
  /** Shown under the call (a sub-agent's log under its Agent call). */
  children?: ComponentChildren;
}

/** One tool call: name and input at a glance; open it for the full input and its result. */
export function ToolCallView(p: ToolCallProps) {
  const waiting = p.name === 'AskUserQuestion' ? 'waiting for an answer' : 'waiting for approval';
  const state = p.denied ? 'denied' : p.waiting ? waiting : p.result === undefined ? 'running…' : p.isError ? 'error' : 'done';
  const short = describeInput(p.name, p.input).split('\n')[0];
  const persisted = p.sessionId ? persistedResultOf(p.result) : undefined;
  return (
    <details class="tool" data-error={p.isError || p.denied ? 'true' : 'false'} data-tool={p.name}>
      <summary>
        <strong>{p.name}</strong>
        <code>{short}</code>
        <span class={p.isError || p.denied ? 'error' : 'muted'}>{state}</span>
        {p.durationMs !== undefined && <span class="muted">{formatDuration(p.durationMs)}</span>}
      </summary>
      <div>
        <div class="muted">Input</div>
        <pre>{p.name === 'Bash' ? describeInput(p.name, p.input) : JSON.stringify(p.input ?? {}, null, 2)}</pre>
        {p.progress && p.result === undefined && (
          <>
            <div class="muted">Output so far</div>
            <pre tabIndex={0}>{p.progress}</pre>
          </>
        )}
        {p.waiting && <p class="notice">{p.waiting}</p>}
        {p.result !== undefined && (
          <>
            <div class={p.isError ? 'error' : 'muted'}>{p.isError ? 'Error' : 'Result'}</div>
            <pre tabIndex={0}>{p.result || '(no output)'}</pre>
            {persisted && p.sessionId && <PersistedOutput sessionId={p.sessionId} {...persisted} />}
          </>
        )}
        {p.children}
      </div>
    </details>
  );
}
