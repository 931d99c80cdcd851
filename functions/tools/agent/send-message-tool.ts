import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { buildTool, ToolError, type AgentMessageOutcome } from '../tool.ts';

export const SEND_MESSAGE_TOOL_NAME = 'SendMessage';

/** The reference's messages to agent teams (shutdown, plan approval); Stratus has no teams, so they are refused. */
const structuredMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('shutdown_request'), reason: z.string().optional() }),
  z.object({ type: z.literal('shutdown_response'), request_id: z.string(), approve: z.boolean(), reason: z.string().optional() }),
  z.object({ type: z.literal('plan_approval_response'), request_id: z.string(), approve: z.boolean(), feedback: z.string().optional() }),
]);

const inputSchema = z.object({
  to: z.string().describe("Recipient: the agentId of one of this session's sub-agents, as its Agent call returned it"),
  summary: z.string().optional().describe('A 5-10 word summary shown as a preview in the UI (required when message is a string)'),
  message: z.union([z.string().describe('Plain text message content'), structuredMessage]),
});

export type SendMessageInput = z.output<typeof inputSchema>;

export const NO_TEAMS_MESSAGE = "Stratus has no agent teams: send a plain text message to one sub-agent's agentId.";

const DESCRIPTION = [
  "Continues one of this session's sub-agents with a new message: `to` is the agentId its Agent call returned.",
  'The agent resumes with its whole conversation as it left it, and runs in the background: you are notified when it finishes, as for a background Agent call.',
  'A background agent that is still running gets the message at its next tool round.',
  'Prefer this over a new Agent call when the follow-up builds on what that agent already read or did.',
].join('\n');

/**
 * SendMessage: continues a sub-agent by id, from its own stored log (functions/agent/subagent-continue.ts).
 * Its answer is the reference's `{success, message}` as JSON text.
 */
export const sendMessageTool = buildTool({
  name: SEND_MESSAGE_TOOL_NAME,
  searchHint: 'send messages to agent teammates (swarm protocol)',
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  isReadOnly: (input: SendMessageInput) => typeof input.message === 'string',
  // The continued agent's own calls each go through permissions; the message needs no answer (as for the Agent tool).
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async validateInput(input: SendMessageInput) {
    if (input.to.trim().length === 0) return { ok: false, message: 'to must not be empty' };
    if (input.to.includes('@')) return { ok: false, message: 'to must be a bare teammate name or "*" — there is only one team per session' };
    if (typeof input.message === 'string') {
      if (!input.summary || input.summary.trim().length === 0) return { ok: false, message: 'summary is required when message is a string' };
      return { ok: true };
    }
    if (input.to === '*') return { ok: false, message: 'structured messages cannot be broadcast (to: "*")' };
    return { ok: false, message: NO_TEAMS_MESSAGE };
  },
  async call(input: SendMessageInput, ctx) {
    if (!ctx.agentMessages) throw new ToolError('Sub-agents cannot be continued in this context.');
    if (typeof input.message !== 'string' || input.to === '*') throw new ToolError(NO_TEAMS_MESSAGE);
    return { data: await ctx.agentMessages.send(input.to, input.message, ctx) };
  },
  mapToolResultToToolResultBlockParam(out: AgentMessageOutcome, toolUseId): ToolResultBlockParam {
    return { type: 'tool_result', tool_use_id: toolUseId, content: [{ type: 'text', text: JSON.stringify(out) }] };
  },
});
