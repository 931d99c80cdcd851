import type { MessagesRequest, ScriptedResponse } from '../../local/scripted-model/script.ts';

/** How a sub-agent test answers each recorded request: by who asked (undefined: not scripted). */
export type ScriptedRoute = (body: MessagesRequest) => ScriptedResponse | undefined;

/** The first user text of a request: which agent (the parent's prompt, or a sub-agent's) asked (the harness's reminders before it left out). */
export function firstText(body: MessagesRequest): string {
  const first = body.messages[0]!;
  if (typeof first.content === 'string') return first.content;
  return first.content
    .filter((b) => b.type === 'text' && !String(b.text).startsWith('<system-reminder>'))
    .map((b) => String(b.text))
    .join('');
}

export function systemText(body: MessagesRequest): string {
  return Array.isArray(body.system) ? body.system.map((b: { text: string }) => b.text).join('') : String(body.system);
}

export const agentCall = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'Agent', input });
