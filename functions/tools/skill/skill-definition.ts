import type { SkillFile } from '../../../sandbox-runner/protocol.ts';
import { parseFrontMatter, type FrontMatterValue } from './front-matter.ts';

/** A repository skill as the Skill tool and the listing use it. */
export interface SkillDefinition {
  /** The folder's name: what the listing shows and the model calls it by. */
  name: string;
  /** The front matter's `name`, which the model may call it by too. */
  displayName?: string;
  description: string;
  whenToUse?: string;
  /** `disable-model-invocation: true`: not listed, and the Skill tool refuses it. */
  disableModelInvocation: boolean;
  /** Names of `$name` placeholders, in the order of the arguments they take (`arguments`). */
  argumentNames: string[];
  /** Virtual path of the skill's folder. */
  dir: string;
  /** SKILL.md without its front matter. */
  body: string;
}

/** The skill a SKILL.md describes, read the way the reference reads a skill folder. */
export function skillFromFile(file: SkillFile): SkillDefinition {
  const { fields, body } = parseFrontMatter(file.content);
  const whenToUse = textOf(fields.when_to_use);
  return {
    name: file.name,
    ...(fields.name !== undefined ? { displayName: String(fields.name) } : {}),
    description: textOf(fields.description) ?? descriptionFromBody(body),
    ...(whenToUse !== undefined ? { whenToUse } : {}),
    disableModelInvocation: fields['disable-model-invocation'] === true || fields['disable-model-invocation'] === 'true',
    argumentNames: argumentNamesOf(fields.arguments),
    dir: file.dir,
    body,
  };
}

/** The skill a name given to the Skill tool means: by folder name, then by its front matter's name. */
export function findSkill(skills: readonly SkillDefinition[], name: string): SkillDefinition | undefined {
  return skills.find((s) => s.name === name || (s.displayName ?? s.name) === name);
}

function textOf(value: FrontMatterValue | undefined): string | undefined {
  if (value === undefined || Array.isArray(value)) return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
}

/** Without a description: the body's first non-empty line (a heading without its `#`s), else "Skill". */
function descriptionFromBody(body: string): string {
  for (const line of body.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const text = /^#+\s+(.+)$/.exec(trimmed)?.[1] ?? trimmed;
    return text.length > 100 ? `${text.slice(0, 97)}...` : text;
  }
  return 'Skill';
}

function argumentNamesOf(value: FrontMatterValue | undefined): string[] {
  const names = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : [];
  return names.filter((n) => n.trim() !== '' && !/^\d+$/.test(n));
}
