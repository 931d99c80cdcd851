import type { TurnEvent } from './sse.ts';
import type { CallTiming } from './stored-timing.ts';

/** What a tool call is about, in one line: its command, path or pattern. */
export function inputSummary(input: unknown): string {
  if (!input || typeof input !== 'object') return '';
  const fields = input as Record<string, unknown>;
  const main = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description'].map((k) => fields[k]).find((v) => typeof v === 'string') as
    | string
    | undefined;
  const text = main ?? JSON.stringify(input);
  const line = text.split('\n')[0]!;
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
  return '';
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
export const RESULT_LINES = 4;

/**
 * Prints a turn as it happens: assistant text as it arrives, each tool call with its input, a
 * spinner with the elapsed time while it runs (on a terminal), the result's first lines, and
 * the usage at the end. With `json`, every event is one JSON line instead.
 */
export function createTurnRenderer(out: NodeJS.WriteStream, opts: { json: boolean; timings?: ReadonlyMap<string, CallTiming> }) {
  let spinner: NodeJS.Timeout | undefined;
  let midLine = false;
  const running = new Map<string, number>();
  // A call the log already timed (a replayed turn) keeps its stored times; others are timed as they stream.
  const startOf = (id: string) => opts.timings?.get(id)?.startedAt ?? Date.now();
  const endOf = (id: string) => opts.timings?.get(id)?.endedAt ?? Date.now();
  const stopSpinner = () => {
    if (!spinner) return;
    clearInterval(spinner);
    spinner = undefined;
    out.write('\r\x1b[K');
  };
  const line = (text: string) => {
    stopSpinner();
    if (midLine) out.write('\n');
    midLine = false;
    out.write(`${text}\n`);
  };
  const startSpinner = (label: string, since: number) => {
    if (!out.isTTY) return;
    let frame = 0;
    spinner = setInterval(() => out.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label} ${((Date.now() - since) / 1000).toFixed(1)}s`), 100);
  };
  return {
    event(event: TurnEvent): void {
      if (opts.json) {
        out.write(`${JSON.stringify(event)}\n`);
        return;
      }
      switch (event.type) {
        case 'text_delta':
          stopSpinner();
          out.write(event.text);
          midLine = !event.text.endsWith('\n');
          break;
        case 'tool_use':
          line(`● ${event.name}(${inputSummary(event.input)})`);
          running.set(event.id, startOf(event.id));
          startSpinner(event.name, startOf(event.id));
          break;
        case 'tool_result': {
          const startedAt = running.get(event.toolUseId);
          running.delete(event.toolUseId);
          // Blank lines a result starts with would leave the ⎿ line empty.
          const lines = resultText(event.content)
            .replace(/^(\s*\n)+/, '')
            .split('\n');
          const shown = lines.slice(0, RESULT_LINES).map((l, i) => `${i === 0 ? '  ⎿ ' : '    '}${l}`);
          const more = lines.length - RESULT_LINES;
          if (more > 0) shown.push(`    … ${more} more ${more === 1 ? 'line' : 'lines'}`);
          const took = startedAt ? ` (${((endOf(event.toolUseId) - startedAt) / 1000).toFixed(1)}s)` : '';
          line(`${event.isError ? `  ✗ error${took}` : ''}${event.isError ? '\n' : ''}${shown.join('\n')}${event.isError ? '' : took}`);
          break;
        }
        case 'permission_request':
          line(`? ${event.toolName} waits for permission: ${inputSummary(event.input)}  [${event.toolUseId}]`);
          break;
        case 'plan':
          line(`? a plan waits for approval (stratus approve-plan / reject-plan)  [${event.toolUseId}]\n${event.plan.replace(/^/gm, '    ')}`);
          break;
        case 'permission_denied':
          line(`  ✗ ${event.toolName} denied`);
          break;
        case 'todos':
          line(event.todos.map((t) => `  ${t.status === 'completed' ? '☒' : '☐'} ${t.status === 'in_progress' ? t.activeForm : t.content}`).join('\n'));
          break;
        case 'notice':
          line(`  ! ${event.message}`);
          break;
        case 'model_retry':
          line(`  (model call failed: ${event.error}; retrying in ${Math.round(event.delayMs / 100) / 10}s)`);
          break;
        case 'turn_end': {
          const usage = `${event.usage.inputTokens} input + ${event.usage.outputTokens} output tokens`;
          // The server prices the turn's usage (its model price table); an unpriced model sends none.
          const cost = event.usage.costUsd;
          line(`— ${event.stopReason} · ${usage}${cost !== undefined ? ` · $${cost.toFixed(4)}` : ''}${event.error ? `\n${event.error}` : ''}`);
          break;
        }
        default:
          break;
      }
    },
    close: stopSpinner,
  };
}
