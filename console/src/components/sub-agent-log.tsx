import { useState } from 'preact/hooks';
import { api, must, type Message } from '../api.ts';
import { MessageLog } from './message-log.tsx';

type Loaded = { agentType: string; status: string; messages: Message[] } | { error: string } | null;

/** Every page of a sub-agent's own log. */
async function loadAgentLog(sessionId: string, toolUseId: string): Promise<Exclude<Loaded, null>> {
  const { agents } = must(await api.GET('/v1/sessions/{id}/agents', { params: { path: { id: sessionId } } }));
  const agent = agents.find((a) => a.toolUseId === toolUseId);
  if (!agent) return { error: 'This call started no sub-agent log (it may have failed before starting).' };
  const messages: Message[] = [];
  let cursor: string | undefined;
  do {
    const page = must(
      await api.GET('/v1/sessions/{id}/agents/{agentId}/messages', {
        params: { path: { id: sessionId, agentId: agent.agentId }, query: { limit: 200, ...(cursor ? { cursor } : {}) } },
      }),
    );
    messages.push(...page.messages);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { agentType: agent.subagentType, status: agent.status, messages };
}

/**
 * An Agent call's sub-agent, nested under the call: its own log (prompts, text, tool calls with
 * results, its own sub-agents), fetched when first opened.
 */
export function SubAgentLog({ sessionId, toolUseId }: { sessionId: string; toolUseId: string }) {
  const [loaded, setLoaded] = useState<Loaded>(null);
  const onToggle = (e: Event) => {
    if (!(e.currentTarget as HTMLDetailsElement).open || loaded) return;
    loadAgentLog(sessionId, toolUseId).then(setLoaded, (err: Error) => setLoaded({ error: err.message }));
  };
  return (
    <details class="subagent" onToggle={onToggle}>
      <summary>
        Sub-agent log
        {loaded && 'agentType' in loaded && (
          <span class="muted">
            {' '}
            · {loaded.agentType} · {loaded.status} · {loaded.messages.length} messages
          </span>
        )}
      </summary>
      {!loaded && (
        <p class="muted" aria-live="polite">
          Loading…
        </p>
      )}
      {loaded && 'error' in loaded && <p class="muted">{loaded.error}</p>}
      {loaded && 'messages' in loaded && <MessageLog sessionId={sessionId} messages={loaded.messages} waiting={new Set()} />}
    </details>
  );
}
