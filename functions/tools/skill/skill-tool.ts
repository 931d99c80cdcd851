import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';
import { findSkill, type SkillDefinition } from './skill-definition.ts';
import { skillPromptText } from './skill-prompt.ts';

export const SKILL_TOOL_NAME = 'Skill';

// Unknown parameters are dropped, not refused (as observed in the reference).
const inputSchema = z.object({
  skill: z.string().describe('The skill name. E.g., "commit", "review-pr", or "pdf"'),
  args: z.string().optional().describe('Optional arguments for the skill'),
});

const DESCRIPTION = [
  "Loads one of the repository's skills (`.claude/skills/<name>/SKILL.md`) into the conversation: its instructions arrive right after this call's result, and you then follow them.",
  'The skills on offer are named in a system-reminder at the start of the conversation; call this tool with one of those names (a leading `/` is fine) and, when the skill takes them, its arguments in `args`.',
  'When a request matches a listed skill, load it before doing anything else about the request, and do not claim to use a skill without calling this tool.',
  'Do not load a skill whose instructions are already in the conversation for the current task.',
].join('\n');

/** The name as the model gave it: trimmed, without a leading slash. */
function skillName(input: string): string {
  const trimmed = input.trim();
  return trimmed.startsWith('/') ? trimmed.slice(1) : trimmed;
}

/**
 * The Skill tool (docs/tools.md, "Skill"): finds a skill the turn read from the workspace and
 * answers with the reference's texts; the skill's instructions go after the tool_result in the
 * same user message. It only adds text, so it needs no approval.
 */
export const skillTool = buildTool({
  name: SKILL_TOOL_NAME,
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  searchHint: 'invoke a slash-command skill',
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async validateInput(input, ctx) {
    const name = skillName(input.skill);
    if (!name) return { ok: false, message: `Invalid skill format: ${input.skill}` };
    const skill = findSkill(ctx.skills ?? [], name);
    if (!skill) return { ok: false, message: `Unknown skill: ${name}` };
    if (skill.disableModelInvocation)
      return { ok: false, message: `Skill ${name} cannot be used with ${SKILL_TOOL_NAME} tool due to disable-model-invocation` };
    return { ok: true };
  },
  async call(input, ctx) {
    const name = skillName(input.skill);
    const skill: SkillDefinition | undefined = findSkill(ctx.skills ?? [], name);
    if (!skill) throw new ToolError(`Unknown skill: ${name}`);
    return { data: { commandName: name }, newMessages: [{ type: 'text', text: skillPromptText(skill, input.args, ctx.sessionId) }] };
  },
  mapToolResultToToolResultBlockParam(out: { commandName: string }, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: `Launching skill: ${out.commandName}` };
  },
});
