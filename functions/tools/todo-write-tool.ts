import { z } from 'zod';
import type { TodoItem } from '../stores/session-store.ts';
import { buildTool, ToolError } from './tool.ts';

export const TODO_WRITE_TOOL_NAME = 'TodoWrite';

/** What every successful write answers (docs/tools.md, "TodoWrite"). */
export const TODOS_UPDATED_TEXT =
  'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable';

// Unknown fields of an entry are dropped, not refused; unknown top-level parameters are refused.
const todoItem = z.object({
  content: z.string().min(1, 'Content cannot be empty'),
  status: z.enum(['pending', 'in_progress', 'completed']),
  activeForm: z.string().min(1, 'Active form cannot be empty'),
});

const inputSchema = z.strictObject({
  todos: z.array(todoItem).describe('The updated todo list'),
});

const DESCRIPTION = [
  'Keeps your task list for this session: each call replaces the whole list.',
  'Use it for work with three or more steps, or when the task asks for several things: write the steps down before you start, mark one `in_progress` when you begin it, and `completed` as soon as it is done (not in a batch at the end).',
  'Keep exactly one entry in progress while you work; add entries you discover on the way and remove ones that no longer apply.',
  'Mark an entry completed only when it is fully done: tests that fail, unfinished code or an unresolved error keep it in progress.',
  'Each entry has `content` (what to do, imperative: "Run the tests") and `activeForm` (the same in the present continuous: "Running the tests").',
  "Skip it for a single, simple step. The people following the session see the list as it changes (the API, the console and a GitHub run's progress comment).",
].join('\n');

export const todoWriteTool = buildTool({
  name: TODO_WRITE_TOOL_NAME,
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  searchHint: 'task list todo plan progress checklist',
  // It changes nothing but the list: no one needs to approve it, in any mode.
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async call(input, ctx) {
    if (!ctx.todos) throw new ToolError('No task list is kept for this agent.');
    const todos: TodoItem[] = input.todos;
    await ctx.todos.write(todos);
    return { data: { todos } };
  },
  mapToolResultToToolResultBlockParam(_output: { todos: TodoItem[] }, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: TODOS_UPDATED_TEXT };
  },
});

/** A list kept only for the run that holds it (a sub-agent's). */
export function runTodoList(): { write(todos: TodoItem[]): Promise<void>; current(): TodoItem[] } {
  let list: TodoItem[] = [];
  return {
    write: async (todos) => {
      list = todos;
    },
    current: () => list,
  };
}
