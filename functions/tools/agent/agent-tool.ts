import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';
import { agentNotFoundMessage, BUILT_IN_AGENTS, type AgentDefinition } from './agent-definitions.ts';
import { agentToolDescription } from './agent-tool-description.ts';
import { AGENT_TOOL_NAME } from './agent-tool-filter.ts';
import type { SubagentLaunch, SubagentResult } from './subagent-types.ts';

export { AGENT_TOOL_NAME };

/** The answer when a fork tries to fork again. */
export const FORK_IN_FORK_MESSAGE = 'Fork is not available inside a forked worker. Complete your task directly using your tools.';
/**
 * A fork repeats its parent's request byte for byte, which its own invocation cannot rebuild:
 * a background agent needs a type (docs/tool-pipeline.md, "Sub-agents").
 */
export const BACKGROUND_FORK_MESSAGE = 'run_in_background needs a subagent_type: a fork runs in the foreground in Stratus.';

/**
 * The answer to a background launch (docs/tool-pipeline.md, "Sub-agents": the launch text
 * without an output file to read), naming SendMessage to continue the agent.
 */
export function asyncLaunchedText(agentId: string): string {
  return `Async agent launched successfully.\nagentId: ${agentId} (internal ID - do not mention to user. Use SendMessage with to: '${agentId}' to continue this agent.)\nThe agent is working in the background. You will be notified automatically when it completes.\nBriefly tell the user what you launched and end your response. Do not generate any other text — agent results will arrive in a subsequent message.`;
}

/** The result of a sub-agent that ended without saying anything. */
export const EMPTY_AGENT_OUTPUT = '(Subagent completed but returned no output.)';

const inputSchema = z.strictObject({
  description: z.string().describe('A short (3-5 word) description of the task'),
  prompt: z.string().describe('The task for the agent to perform'),
  subagent_type: z.string().optional().describe('The type of specialized agent to use for this task'),
  model: z
    .enum(['sonnet', 'opus', 'haiku'])
    .optional()
    .describe(
      "Optional model override for this agent. Takes precedence over the agent definition's model frontmatter. If omitted, uses the agent definition's model, or inherits from the parent.",
    ),
  run_in_background: z.boolean().optional().describe('Set to true to run this agent in the background. You will be notified when it completes.'),
});

export type AgentInput = z.output<typeof inputSchema>;

/**
 * The Agent tool: runs a sub-agent in the same turn engine with its own log and returns its
 * final text. Without `subagent_type` it forks the parent (docs/tool-pipeline.md, "Sub-agents").
 * Concurrency-safe: several sub-agents of one response run at once.
 */
export const agentTool = buildTool({
  name: AGENT_TOOL_NAME,
  aliases: ['Task'],
  searchHint: 'delegate work to a subagent',
  inputSchema,
  description: agentToolDescription(BUILT_IN_AGENTS),
  maxResultSizeChars: 100_000,
  isConcurrencySafe: () => true,
  // The sub-agent's own tool calls each go through permissions; launching one needs no answer.
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async call(input: AgentInput, ctx) {
    const runner = ctx.subagents;
    if (!runner) throw new ToolError('Sub-agents are not available in this context.');
    let agent: AgentDefinition | undefined;
    if (input.subagent_type === undefined) {
      if (runner.isForkChild) throw new ToolError(FORK_IN_FORK_MESSAGE);
      if (input.run_in_background) throw new ToolError(BACKGROUND_FORK_MESSAGE);
    } else {
      agent = runner.agents.find((a) => a.agentType === input.subagent_type);
      if (!agent) throw new ToolError(agentNotFoundMessage(input.subagent_type, runner.agents));
    }
    const background = input.run_in_background === true;
    return {
      data: await runner.run(
        { toolUseId: ctx.toolUseId, description: input.description, prompt: input.prompt, agent, ...(background ? { background } : {}) },
        ctx,
      ),
    };
  },
  mapToolResultToToolResultBlockParam(out: SubagentResult | SubagentLaunch, toolUseId): ToolResultBlockParam {
    if (out.status === 'async_launched')
      return { type: 'tool_result', tool_use_id: toolUseId, content: [{ type: 'text', text: asyncLaunchedText(out.agentId) }] };
    const content = out.content.length > 0 ? out.content : [{ type: 'text' as const, text: EMPTY_AGENT_OUTPUT }];
    if (out.oneShot) return { type: 'tool_result', tool_use_id: toolUseId, content };
    // One-shot agents (Explore, Plan) get no trailer above: they are not meant to be continued.
    const trailer = `agentId: ${out.agentId} (use SendMessage with to: '${out.agentId}' to continue this agent)\n<usage>total_tokens: ${out.totalTokens}\ntool_uses: ${out.totalToolUseCount}\nduration_ms: ${out.totalDurationMs}</usage>`;
    return { type: 'tool_result', tool_use_id: toolUseId, content: [...content, { type: 'text', text: trailer }] };
  },
});

/**
 * The Agent tool as a session sees it: its description lists the agents on offer, so a session
 * with custom agents gets a copy naming them (built-ins only: the shared tool, byte for byte).
 */
export function agentToolFor(agents: readonly AgentDefinition[]): typeof agentTool {
  const custom = agents.some((a) => a.source === 'custom');
  return custom ? { ...agentTool, description: agentToolDescription(agents) } : agentTool;
}
