import { z } from 'zod';

/**
 * Custom sub-agent definitions a session (or a connected repository's runs) carries in its
 * settings, in the fields of Claude Code's agent files: a name the model passes as
 * `subagent_type`, when to use it (shown in the Agent tool's description), its system prompt, and
 * the tools it may use (`tools`: names or `*`, with `Agent(type, …)` to allow nested agents;
 * `disallowedTools`). A custom agent with a built-in's name replaces the built-in. They live in
 * the session's settings, so every turn's reload has them.
 */
export const customAgentSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'letters, digits, "_" and "-", starting with a letter (at most 64)'),
  description: z.string().min(1).max(2_000),
  prompt: z.string().min(1).max(50_000),
  tools: z.array(z.string().min(1).max(200)).max(100).optional(),
  disallowedTools: z.array(z.string().min(1).max(200)).max(100).optional(),
  /** Recorded with the definition; sub-agents run on the session's model (docs/tool-pipeline.md). */
  model: z.string().min(1).max(200).optional(),
});
export type CustomAgent = z.output<typeof customAgentSchema>;

export const customAgentsSchema = z
  .array(customAgentSchema)
  .max(20)
  .refine((agents) => new Set(agents.map((a) => a.name)).size === agents.length, 'agent names must be unique');
