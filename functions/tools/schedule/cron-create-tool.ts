import { z } from 'zod';
import { AGENT_SCHEDULE_MAX_AGE_DAYS } from './schedule-limits.ts';
import { errorMessage } from '../../shared/errors.ts';
import { buildTool, ToolError, type AgentSchedule } from '../tool.ts';
import { cronToHuman } from './cron-to-human.ts';

export const CRON_CREATE_TOOL_NAME = 'CronCreate';
/** Where an agent-made schedule lives; the reference names its file or its process here. */
export const SCHEDULE_STORED_TEXT = 'Stored as a Stratus schedule of this session (listed by GET /v1/schedules)';
export const NO_SCHEDULES_MESSAGE = 'Schedules are not available in this context.';

const inputSchema = z.strictObject({
  cron: z
    .string()
    .describe('Standard 5-field cron expression in UTC: "M H DoM Mon DoW" (e.g. "*/30 * * * *" = every 30 minutes, "0 9 * * 1-5" = weekdays at 9:00 UTC).'),
  prompt: z.string().describe('The prompt to run in this session at each fire time.'),
  recurring: z
    .boolean()
    .optional()
    .describe(
      `true (default) = fire on every cron match until deleted or auto-expired after ${AGENT_SCHEDULE_MAX_AGE_DAYS} days. false = fire once at the next match, then auto-delete.`,
    ),
  durable: z.boolean().optional().describe('Accepted for compatibility: Stratus schedules are always stored and survive restarts.'),
});

const DESCRIPTION = [
  'Schedules a prompt to run later in this session, on a cron schedule (UTC): follow-up work such as checking a build again in an hour or a daily summary.',
  'Each firing runs the prompt as an unattended turn of this session, under its budgets; a firing while the session is busy is skipped.',
  `Recurring schedules (the default) fire on every match and expire after ${AGENT_SCHEDULE_MAX_AGE_DAYS} days; \`recurring: false\` fires once at the next match and is then deleted.`,
  "Use CronList to see this session's schedules and CronDelete to cancel one.",
].join('\n');

/** CronCreate: one agent-made Stratus schedule of the session (functions/schedules/agent-schedules.ts). */
export const cronCreateTool = buildTool({
  name: CRON_CREATE_TOOL_NAME,
  searchHint: 'schedule a recurring or one-shot prompt',
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  async validateInput(input, ctx) {
    if (!ctx.schedules) return { ok: true };
    try {
      await ctx.schedules.validate(input.cron);
    } catch (err) {
      return { ok: false, message: errorMessage(err) };
    }
    if ((await ctx.schedules.list()).length >= ctx.schedules.maxJobs)
      return { ok: false, message: `Too many scheduled jobs (max ${ctx.schedules.maxJobs}). Cancel one first.` };
    return { ok: true };
  },
  async call(input, ctx) {
    if (!ctx.schedules) throw new ToolError(NO_SCHEDULES_MESSAGE);
    const recurring = input.recurring !== false;
    return { data: await ctx.schedules.create({ cron: input.cron, prompt: input.prompt, recurring, toolUseId: ctx.toolUseId }) };
  },
  mapToolResultToToolResultBlockParam(out: AgentSchedule, toolUseId) {
    const human = cronToHuman(out.cron);
    const content = out.recurring
      ? `Scheduled recurring job ${out.id} (${human}). ${SCHEDULE_STORED_TEXT}. Auto-expires after ${AGENT_SCHEDULE_MAX_AGE_DAYS} days. Use CronDelete to cancel sooner.`
      : `Scheduled one-shot task ${out.id} (${human}). ${SCHEDULE_STORED_TEXT}. It will fire once then auto-delete.`;
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
