import type { MessageParam, TextBlockParam, ToolUnion, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { AgentDefinition } from './agent-definitions.ts';

/**
 * The parent's model request as it went out, for a fork: the child repeats its system prompt,
 * tools and messages byte for byte so its first request shares the parent's cached prefix.
 * `toolUses` are the calls of the response streamed so far (this Agent call among them).
 */
export interface ForkBase {
  system: string;
  tools: ToolUnion[];
  messages: MessageParam[];
  toolUses: ToolUseBlock[];
  /** The text that opened the parent's first user message (its instructions and date). */
  userContext?: string;
  /** The parent's replacement decisions (a copy): the fork's budget decides as the parent's did. */
  cloneReplacementState?: () => { seenIds: Set<string>; replacements: Map<string, string> };
}

export interface SubagentRequest {
  toolUseId: string;
  description: string;
  prompt: string;
  /** Undefined: a fork of the parent (same system prompt, tools and conversation). */
  agent: AgentDefinition | undefined;
  /** `run_in_background`: launched in its own invocation; the call answers at once. */
  background?: boolean;
}

/** What a background launch hands back at once (its result comes later, as a notification). */
export interface SubagentLaunch {
  status: 'async_launched';
  agentId: string;
  description: string;
  prompt: string;
}

/** What a finished sub-agent hands back: its final text is the parent's tool_result. */
export interface SubagentResult {
  status?: 'completed';
  agentId: string;
  agentType: string;
  oneShot: boolean;
  content: TextBlockParam[];
  totalTokens: number;
  totalToolUseCount: number;
  totalDurationMs: number;
}
