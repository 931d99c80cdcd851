import { describe, expect, it } from 'vitest';
import { EXPLORE_AGENT, GENERAL_PURPOSE_AGENT, PLAN_AGENT, type AgentDefinition } from '../../../../functions/tools/agent/agent-definitions.ts';
import { parseToolSpec, resolveAgentTools } from '../../../../functions/tools/agent/agent-tool-filter.ts';
import { createExternalTool } from '../../../../functions/tools/external-tool.ts';
import { BUILTIN_TOOLS } from '../../../../functions/tools/registry.ts';

const mcp = createExternalTool({
  name: 'mcp__docs__search',
  description: 'search',
  inputJSONSchema: { type: 'object', properties: {} },
  call: async () => ({ content: [] }),
} as never);
const pool = [...BUILTIN_TOOLS, mcp];
const custom = (over: Partial<AgentDefinition>): AgentDefinition => ({ agentType: 'custom', whenToUse: '', systemPrompt: '', source: 'custom', ...over });

describe('sub-agent tool filtering, per agent kind', () => {
  const cases: { kind: string; agent: AgentDefinition; isAsync: boolean; tools: string[]; allowedAgentTypes?: string[]; invalid?: string[] }[] = [
    {
      kind: 'general-purpose',
      agent: GENERAL_PURPOSE_AGENT,
      isAsync: false,
      tools: [
        'CronCreate',
        'CronDelete',
        'CronList',
        'SendMessage',
        'Bash',
        'Edit',
        'Glob',
        'Grep',
        'NotebookEdit',
        'Read',
        'Skill',
        'TodoWrite',
        'WebFetch',
        'Write',
        'mcp__docs__search',
      ],
    },
    {
      kind: 'Explore',
      agent: EXPLORE_AGENT,
      isAsync: false,
      tools: ['CronCreate', 'CronDelete', 'CronList', 'SendMessage', 'Bash', 'Glob', 'Grep', 'Read', 'Skill', 'TodoWrite', 'WebFetch', 'mcp__docs__search'],
    },
    {
      kind: 'Plan',
      agent: PLAN_AGENT,
      isAsync: false,
      tools: ['CronCreate', 'CronDelete', 'CronList', 'SendMessage', 'Bash', 'Glob', 'Grep', 'Read', 'Skill', 'TodoWrite', 'WebFetch', 'mcp__docs__search'],
    },
    {
      kind: 'background general-purpose (async allow-list)',
      agent: GENERAL_PURPOSE_AGENT,
      isAsync: true,
      tools: ['Bash', 'Edit', 'Glob', 'Grep', 'NotebookEdit', 'Read', 'Skill', 'TodoWrite', 'WebFetch', 'Write', 'mcp__docs__search'],
    },
    { kind: 'custom, tools list', agent: custom({ tools: ['Read', 'Grep', 'Nope'] }), isAsync: false, tools: ['Read', 'Grep'], invalid: ['Nope'] },
    {
      kind: 'custom, disallowedTools',
      agent: custom({ disallowedTools: ['Bash', 'Write'] }),
      isAsync: false,
      tools: [
        'CronCreate',
        'CronDelete',
        'CronList',
        'SendMessage',
        'Edit',
        'Glob',
        'Grep',
        'NotebookEdit',
        'Read',
        'Skill',
        'TodoWrite',
        'WebFetch',
        'mcp__docs__search',
      ],
    },
    {
      kind: 'custom, TaskStop asked for (always disallowed)',
      agent: custom({ tools: ['Read', 'TaskStop'] }),
      isAsync: false,
      tools: ['Read'],
      invalid: ['TaskStop'],
    },
    {
      kind: 'custom, Agent(explore, plan)',
      agent: custom({ tools: ['Read', 'Agent(explore, plan)'] }),
      isAsync: false,
      tools: ['Read', 'Agent'],
      allowedAgentTypes: ['explore', 'plan'],
    },
    {
      kind: 'custom, Agent in a background agent',
      agent: custom({ tools: ['Read', 'Agent(explore)'] }),
      isAsync: true,
      tools: ['Read'],
      invalid: ['Agent(explore)'],
    },
  ];
  // SendMessage and the Cron tools pass layer 1 (the reference keeps them for sub-agents) but not the async allow-list.
  for (const c of cases) {
    it(c.kind, () => {
      const resolved = resolveAgentTools(c.agent, pool, { isAsync: c.isAsync });
      expect(resolved.tools.map((t) => t.name).sort()).toEqual([...c.tools].sort());
      expect(resolved.allowedAgentTypes).toEqual(c.allowedAgentTypes);
      expect(resolved.invalidToolSpecs).toEqual(c.invalid ?? []);
      // No sub-agent gets the always-disallowed tools unless a definition names Agent explicitly.
      for (const name of ['TaskOutput', 'TaskStop']) expect(resolved.tools.map((t) => t.name)).not.toContain(name);
    });
  }

  it('parses Agent(a, b) specs', () => {
    expect(parseToolSpec('Agent(explore, plan)')).toEqual({ name: 'Agent', args: ['explore', 'plan'] });
    expect(parseToolSpec('Read')).toEqual({ name: 'Read' });
  });
});
