import type { MessagesRequest, ScriptedResponse } from '../../local/scripted-model/script.ts';

/** How a sub-agent test answers each recorded request: by who asked (undefined: not scripted). */
export type ScriptedRoute = (body: MessagesRequest) => ScriptedResponse | undefined;

// The first user text of a request (which agent asked), as the scripted model reads it.
export { firstUserText as firstText } from '../../local/scripted-model/script.ts';

export function systemText(body: MessagesRequest): string {
  return Array.isArray(body.system) ? body.system.map((b: { text: string }) => b.text).join('') : String(body.system);
}

export const agentCall = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'Agent', input });
