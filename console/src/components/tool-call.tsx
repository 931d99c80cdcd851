import { describeInput, formatDuration } from '../format.ts';

export interface ToolCallProps {
  name: string;
  input: unknown;
  result?: string;
  isError?: boolean;
  durationMs?: number;
  progress?: string;
  waiting?: string;
  denied?: boolean;
}

/** One tool call: name and input at a glance; open it for the full input and its result. */
export function ToolCallView(p: ToolCallProps) {
  const state = p.denied ? 'denied' : p.waiting ? 'waiting for approval' : p.result === undefined ? 'running…' : p.isError ? 'error' : 'done';
  const short = describeInput(p.name, p.input).split('\n')[0];
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
            <pre>{p.progress}</pre>
          </>
        )}
        {p.waiting && <p class="notice">{p.waiting}</p>}
        {p.result !== undefined && (
          <>
            <div class={p.isError ? 'error' : 'muted'}>{p.isError ? 'Error' : 'Result'}</div>
            <pre>{p.result || '(no output)'}</pre>
          </>
        )}
      </div>
    </details>
  );
}
