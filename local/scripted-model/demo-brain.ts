import type { Brain, MessagesRequest, ScriptedResponse } from './script.ts';

/**
 * The model `npm start` uses when no API key is set, so a newcomer can watch a full turn with
 * real tool execution. It is deterministic:
 *  - a prompt with a `backticked command` runs it with Bash;
 *  - a prompt naming a /workspace/... path reads it with Read;
 *  - otherwise it lists the workspace with Bash;
 *  - once tool results are in, it reports what came back and ends the turn.
 */
export const demoBrain: Brain = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (!last) return say('Hello from the scripted model.');
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (results.length > 0) {
    const summary = results.map((r) => `- ${r.is_error ? 'error' : 'ok'}: ${firstLine(contentText(r.content))}`).join('\n');
    return say(`The scripted model ran ${results.length} tool call(s):\n${summary}\nDone.`);
  }
  const prompt = blocks.map((b) => (b.type === 'text' ? String(b.text) : '')).join('\n');
  const command = /`([^`]+)`/.exec(prompt)?.[1];
  const file = /(\/workspace\/[^\s`'"]+)/.exec(prompt)?.[1];
  if (command) return useTool('Bash', { command, description: 'Run the command from the prompt' }, `Running \`${command}\`.`);
  if (file) return useTool('Read', { file_path: file }, `Reading ${file}.`);
  return useTool('Bash', { command: 'ls -la', description: 'List the workspace' }, 'Let me look at the workspace.');
};

function say(text: string): ScriptedResponse {
  return { content: [{ type: 'text', text }], stopReason: 'end_turn' };
}

function useTool(name: string, input: unknown, preface: string): ScriptedResponse {
  return { content: [{ type: 'text', text: preface }, { type: 'tool_use', name, input }], stopReason: 'tool_use' };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('');
  return '';
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '(no output)';
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

export type { MessagesRequest };
