import { AGENT_NOTES, EXPLORE_PROMPT, GENERAL_PURPOSE_PROMPT, PLAN_PROMPT } from './agent-prompts.ts';

/**
 * What a sub-agent is: its name (`subagent_type`), when to use it (shown to the model in the
 * Agent tool's description), its system prompt and the tools it may use. `tools` absent or
 * `['*']` means every tool the filter leaves; `Agent(explore, plan)` in `tools` allows the Agent
 * tool limited to those types. `source: 'built-in'` agents skip the custom-agent restrictions.
 */
export interface AgentDefinition {
  agentType: string;
  whenToUse: string;
  systemPrompt: string;
  tools?: readonly string[];
  disallowedTools?: readonly string[];
  /** Shown in the Agent tool's description after the agent. */
  toolsLabel?: string;
  /** One-shot built-ins (Explore, Plan): their result carries no agentId/usage trailer. */
  oneShot?: boolean;
  source: 'built-in' | 'custom';
}

const READ_ONLY_DISALLOWED = ['Agent', 'ExitPlanMode', 'Edit', 'Write', 'NotebookEdit'] as const;

export const GENERAL_PURPOSE_AGENT: AgentDefinition = {
  agentType: 'general-purpose',
  whenToUse:
    'General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks. When you are searching for a keyword or file and are not confident that you will find the right match in the first few tries use this agent to perform the search for you.',
  systemPrompt: `${GENERAL_PURPOSE_PROMPT}\n\n${AGENT_NOTES}`,
  tools: ['*'],
  toolsLabel: '*',
  source: 'built-in',
};

export const EXPLORE_AGENT: AgentDefinition = {
  agentType: 'Explore',
  whenToUse:
    'Fast agent specialized for exploring codebases. Use this when you need to quickly find files by patterns (eg. "src/components/**/*.tsx"), search code for keywords (eg. "API endpoints"), or answer questions about the codebase (eg. "how do API endpoints work?"). When calling this agent, specify the desired thoroughness level: "quick" for basic searches, "medium" for moderate exploration, or "very thorough" for comprehensive analysis across multiple locations and naming conventions.',
  systemPrompt: `${EXPLORE_PROMPT}\n\n${AGENT_NOTES}`,
  disallowedTools: READ_ONLY_DISALLOWED,
  toolsLabel: `All tools except ${READ_ONLY_DISALLOWED.join(', ')}`,
  oneShot: true,
  source: 'built-in',
};

export const PLAN_AGENT: AgentDefinition = {
  agentType: 'Plan',
  whenToUse:
    'Software architect agent for designing implementation plans. Use this when you need to plan the implementation strategy for a task. Returns step-by-step plans, identifies critical files, and considers architectural trade-offs.',
  systemPrompt: `${PLAN_PROMPT}\n\n${AGENT_NOTES}`,
  disallowedTools: READ_ONLY_DISALLOWED,
  toolsLabel: `All tools except ${READ_ONLY_DISALLOWED.join(', ')}`,
  oneShot: true,
  source: 'built-in',
};

/** In the order the Agent tool's description lists them: general-purpose first. */
export const BUILT_IN_AGENTS: readonly AgentDefinition[] = [GENERAL_PURPOSE_AGENT, EXPLORE_AGENT, PLAN_AGENT];

/** A session's custom agent as the Agent tool runs it (the custom-agent restrictions apply). */
export function customAgentDefinition(agent: {
  name: string;
  description: string;
  prompt: string;
  tools?: readonly string[];
  disallowedTools?: readonly string[];
}): AgentDefinition {
  return {
    agentType: agent.name,
    whenToUse: agent.description,
    systemPrompt: `${agent.prompt}\n\n${AGENT_NOTES}`,
    ...(agent.tools ? { tools: agent.tools, toolsLabel: agent.tools.join(', ') } : {}),
    ...(agent.disallowedTools ? { disallowedTools: agent.disallowedTools } : {}),
    source: 'custom',
  };
}

/** The built-ins, then custom agents (a custom agent with a built-in's name replaces it). */
export function activeAgents(custom: readonly AgentDefinition[] = []): AgentDefinition[] {
  const byType = new Map<string, AgentDefinition>();
  for (const agent of [...BUILT_IN_AGENTS, ...custom]) byType.set(agent.agentType, agent);
  return [...byType.values()];
}

/** The error for an unknown `subagent_type`: it names the agents there are. */
export function agentNotFoundMessage(agentType: string, agents: readonly AgentDefinition[]): string {
  return `Agent type '${agentType}' not found. Available agents: ${agents.map((a) => a.agentType).join(', ')}`;
}
