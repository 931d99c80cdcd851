import type { Brain, ScriptedResponse } from './script.ts';

/**
 * The model `npm start` uses when no API key is set, so a newcomer can watch a full turn with
 * real tool execution. It is deterministic and follows the newest prompt in the last user message:
 *  - a prompt with a `backticked command` runs it with Bash;
 *  - a prompt naming a /workspace/... path reads it with Read;
 *  - otherwise it lists the workspace with Bash;
 *  - once tool results are in (and no prompt came with them), it reports what came back and
 *    ends the turn.
 * After an interrupt the next prompt arrives in the same user message as the interrupted call's
 * result and the interrupt note (consecutive user messages merge, as a client sends them),
 * so the newest prompt text wins over the results before it.
 */
export const demoBrain: Brain = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (!last) return say('Hello from the scripted model.');
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const prompt = newestPrompt(blocks);
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (prompt === undefined && results.length > 0) {
    const summary = results.map((r) => `- ${r.is_error ? 'error' : 'ok'}: ${firstLine(contentText(r.content))}`).join('\n');
    return say(`The scripted model ran ${results.length} tool call(s):\n${summary}\nDone.`);
  }
  const command = /`([^`]+)`/.exec(prompt ?? '')?.[1];
  const file = /(\/workspace\/[^\s`'"]+)/.exec(prompt ?? '')?.[1];
  if (command) return useTool('Bash', { command, description: 'Run the command from the prompt' }, `Running \`${command}\`.`);
  if (file) return useTool('Read', { file_path: file }, `Reading ${file}.`);
  return useTool('Bash', { command: 'ls -la', description: 'List the workspace' }, 'Let me look at the workspace.');
};

/**
 * What the harness adds to a user message, not the user's words: the interrupt notes
 * (`[Request interrupted by user]`, `… for tool use]`) and `<system-reminder>` context.
 */
const HARNESS_NOTES = /<system-reminder>[\s\S]*?<\/system-reminder>|\[Request interrupted by user[^\]]*\]/g;

/** The last text a person wrote in the message, if it has one. */
function newestPrompt(blocks: { type: string; [k: string]: unknown }[]): string | undefined {
  const texts = blocks.filter((b) => b.type === 'text').map((b) => String(b.text).replace(HARNESS_NOTES, '').trim());
  return texts.filter((t) => t !== '').at(-1);
}

function say(text: string): ScriptedResponse {
  return { content: [{ type: 'text', text }], stopReason: 'end_turn' };
}

function useTool(name: string, input: unknown, preface: string): ScriptedResponse {
  return {
    content: [
      { type: 'text', text: preface },
      { type: 'tool_use', name, input },
    ],
    stopReason: 'tool_use',
  };
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
