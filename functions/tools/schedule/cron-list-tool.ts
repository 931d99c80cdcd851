import { z } from 'zod';
import { buildTool, ToolError, type AgentSchedule } from '../tool.ts';
import { NO_SCHEDULES_MESSAGE } from './cron-create-tool.ts';
import { cronToHuman } from './cron-to-human.ts';

export const CRON_LIST_TOOL_NAME = 'CronList';
/** A prompt is shown up to this many characters in the list. */
const PROMPT_PREVIEW_CHARS = 80;

/** CronList: the session's own agent-made schedules, one line each, as the reference lists its jobs. */
export const cronListTool = buildTool({
  name: CRON_LIST_TOOL_NAME,
  searchHint: 'list active cron jobs',
  inputSchema: z.strictObject({}),
  description: 'Lists the schedules made with CronCreate in this session: id, schedule, whether it recurs, and its prompt.',
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  compactableResult: true,
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async call(_input, ctx) {
    if (!ctx.schedules) throw new ToolError(NO_SCHEDULES_MESSAGE);
    return { data: { jobs: await ctx.schedules.list() } };
  },
  mapToolResultToToolResultBlockParam(out: { jobs: AgentSchedule[] }, toolUseId) {
    const lines = out.jobs.map((j) => `${j.id} — ${cronToHuman(j.cron)}${j.recurring ? ' (recurring)' : ' (one-shot)'}: ${preview(j.prompt)}`);
    return { type: 'tool_result', tool_use_id: toolUseId, content: lines.length > 0 ? lines.join('\n') : 'No scheduled jobs.' };
  },
});

/** A prompt's first line, up to PROMPT_PREVIEW_CHARS with the ellipsis; a cut line (or a dropped rest) ends in "…", as the reference lists it. */
function preview(prompt: string): string {
  const newline = prompt.indexOf('\n');
  const line = newline === -1 ? prompt : prompt.slice(0, newline);
  if (line.length + (newline === -1 ? 0 : 1) <= PROMPT_PREVIEW_CHARS) return newline === -1 ? line : `${line}…`;
  return `${line.slice(0, PROMPT_PREVIEW_CHARS - 1)}…`;
}
