import type { SkillDefinition } from './skill-definition.ts';

/** The longest description an entry shows before it is cut with "…". */
const MAX_ENTRY_DESCRIPTION = 250;
/** Below this many characters per description, entries show names only. */
const MIN_DESCRIPTION_WIDTH = 20;
/** The listing's share of the context window: 1%, at 4 characters a token. */
const BUDGET_SHARE = 0.01;
const CHARS_PER_TOKEN = 4;

/**
 * The note that tells the model which skills it may load, in the reference's words and format:
 * `- name: description[ - when to use]` a line, descriptions cut to 250 characters, and when
 * the whole listing passes 1% of the context window, every description cut to an equal share
 * (names only when a share would be under 20 characters). Undefined when there is no skill to
 * list (skills with `disable-model-invocation` are left out).
 */
export function skillListingReminder(skills: readonly SkillDefinition[], contextWindow: number): string | undefined {
  const listed = skills.filter((s) => !s.disableModelInvocation);
  if (listed.length === 0) return undefined;
  return `<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n${listingLines(listed, contextWindow)}\n</system-reminder>\n`;
}

function listingLines(skills: readonly SkillDefinition[], contextWindow: number): string {
  const budget = Math.floor(contextWindow * CHARS_PER_TOKEN * BUDGET_SHARE);
  const full = skills.map((s) => `- ${s.name}: ${entryDescription(s)}`);
  if (full.reduce((n, line) => n + line.length, 0) + (full.length - 1) <= budget) return full.join('\n');
  const names = skills.reduce((n, s) => n + s.name.length + 4, 0) + (skills.length - 1);
  const width = Math.floor((budget - names) / skills.length);
  if (width < MIN_DESCRIPTION_WIDTH) return skills.map((s) => `- ${s.name}`).join('\n');
  return skills.map((s) => `- ${s.name}: ${cut(entryDescription(s), width)}`).join('\n');
}

function entryDescription(skill: SkillDefinition): string {
  const text = skill.whenToUse ? `${skill.description} - ${skill.whenToUse}` : skill.description;
  return cut(text, MAX_ENTRY_DESCRIPTION);
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}
