import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';
import { NO_SCHEDULES_MESSAGE } from './cron-create-tool.ts';

export const CRON_DELETE_TOOL_NAME = 'CronDelete';

/** CronDelete: deletes one of the session's own agent-made schedules; any other id is "no such job". */
export const cronDeleteTool = buildTool({
  name: CRON_DELETE_TOOL_NAME,
  searchHint: 'cancel a scheduled cron job',
  inputSchema: z.strictObject({ id: z.string().describe('Job ID returned by CronCreate.') }),
  description: 'Cancels a schedule made with CronCreate in this session, by the id CronCreate returned.',
  maxResultSizeChars: 100_000,
  // It can only undo what this session's agent scheduled itself: nothing to approve.
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async validateInput(input, ctx) {
    if (!ctx.schedules || (await ctx.schedules.list()).some((j) => j.id === input.id)) return { ok: true };
    return { ok: false, message: noSuchJob(input.id) };
  },
  async call(input, ctx) {
    if (!ctx.schedules) throw new ToolError(NO_SCHEDULES_MESSAGE);
    if (!(await ctx.schedules.delete(input.id))) throw new ToolError(noSuchJob(input.id));
    return { data: { id: input.id } };
  },
  mapToolResultToToolResultBlockParam(out: { id: string }, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: `Cancelled job ${out.id}.` };
  },
});

function noSuchJob(id: string): string {
  return `No scheduled job with id '${id}'`;
}
