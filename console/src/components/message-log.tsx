import type { Message } from '../api.ts';
import { resultText } from '../format.ts';
import { SubAgentLog } from './sub-agent-log.tsx';
import { ToolCallView } from './tool-call.tsx';

type Block = { type: string; [key: string]: unknown };
interface ResultInfo {
  content: unknown;
  isError: boolean;
  at: string;
}

/** tool_use id → its result and when it was stored (a call's duration is measured against it). */
function resultsById(messages: Message[]): Map<string, ResultInfo> {
  const out = new Map<string, ResultInfo>();
  for (const m of messages) {
    for (const b of m.content as Block[]) {
      if (b.type === 'tool_result') out.set(String(b.tool_use_id), { content: b.content, isError: b.is_error === true, at: m.createdAt });
    }
  }
  return out;
}

/** The stored conversation: prompts, assistant text, each tool call with its result, compaction marks. */
export function MessageLog({ sessionId, messages, waiting }: { sessionId: string; messages: Message[]; waiting: Set<string> }) {
  const results = resultsById(messages);
  return (
    <div class="log">
      {messages.map((m) => (
        <MessageView key={m.id} sessionId={sessionId} message={m} results={results} waiting={waiting} />
      ))}
    </div>
  );
}

function MessageView({
  sessionId,
  message: m,
  results,
  waiting,
}: {
  sessionId: string;
  message: Message;
  results: Map<string, ResultInfo>;
  waiting: Set<string>;
}) {
  const blocks = m.content as Block[];
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join('\n');
  if (m.kind === 'prompt')
    return (
      <div class="prompt">
        <span class="sr-only">You asked: </span>
        {text}
      </div>
    );
  if (m.kind === 'compact_boundary') return <p class="notice">— The conversation was compacted here; the model sees a summary of what came before. —</p>;
  if (m.kind === 'compact_summary')
    return (
      <details>
        <summary class="muted">Compaction summary</summary>
        <pre>{text}</pre>
      </details>
    );
  if (m.kind !== 'assistant') return null;
  return (
    <>
      {text && <div class="assistant">{text}</div>}
      {blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => {
          const r = results.get(String(b.id));
          return (
            <ToolCallView
              key={String(b.id)}
              sessionId={sessionId}
              name={String(b.name)}
              input={b.input}
              result={r ? resultText(r.content) : undefined}
              isError={r?.isError}
              durationMs={r ? Date.parse(r.at) - Date.parse(m.createdAt) : undefined}
              waiting={waiting.has(String(b.id)) ? 'Waits for your approval (above).' : undefined}
            >
              {b.name === 'Agent' && <SubAgentLog sessionId={sessionId} toolUseId={String(b.id)} />}
            </ToolCallView>
          );
        })}
    </>
  );
}
