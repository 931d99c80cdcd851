import type { SessionRecord, TodoItem } from '../stores/session-store.ts';
import { stripHiddenContent } from './untrusted-text.ts';

/** How often a run looks for a new task list while its turn runs (one read of the session record). */
export const TODO_POLL_MS = 2_000;

const MAX_ENTRY_CHARS = 200;
const MAX_ENTRIES = 50;

/**
 * The agent's task list as a GitHub task list. The entries are the model's words, so they are
 * cleaned as GitHub text is, kept to one line each, and mentions cannot ping anyone.
 */
export function todoMarkdown(todos: readonly TodoItem[]): string {
  const lines = todos.slice(0, MAX_ENTRIES).map((t) => {
    const label = t.status === 'in_progress' ? `**${entryText(t.activeForm)}**` : entryText(t.content);
    return `- [${t.status === 'completed' ? 'x' : ' '}] ${label}`;
  });
  if (todos.length > MAX_ENTRIES) lines.push(`- … ${todos.length - MAX_ENTRIES} more`);
  return lines.join('\n');
}

function entryText(text: string): string {
  const line = stripHiddenContent(text).replace(/\s+/g, ' ').trim().slice(0, MAX_ENTRY_CHARS);
  // A word joiner after @ keeps the text readable and stops GitHub from notifying the user it names.
  return line.replace(/@(?=[\w-])/g, '@\u2060').replace(/([*_`[\]<>])/g, '\\$1');
}

/**
 * Calls `onChange` with the session's task list each time it differs from the last one seen,
 * until `stop()` (which waits for a call in flight, so nothing edits the comment after it).
 * A failed read or edit is reported to `onError` and the watch goes on.
 */
export function watchTodos(
  read: () => Promise<Pick<SessionRecord, 'todos'>>,
  onChange: (todos: TodoItem[]) => Promise<void>,
  opts: { everyMs?: number; onError: (err: unknown) => void },
): { stop(): Promise<void> } {
  let last = JSON.stringify([]);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      const todos = (await read()).todos ?? [];
      const seen = JSON.stringify(todos);
      if (seen !== last && !stopped) {
        last = seen;
        await onChange(todos);
      }
    } catch (err) {
      opts.onError(err);
    }
    if (!stopped) timer = setTimeout(() => (inFlight = tick()), opts.everyMs ?? TODO_POLL_MS);
  };
  timer = setTimeout(() => (inFlight = tick()), opts.everyMs ?? TODO_POLL_MS);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
