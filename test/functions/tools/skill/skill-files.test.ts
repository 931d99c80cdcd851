import { describe, expect, it } from 'vitest';
import { parseFrontMatter } from '../../../../functions/tools/skill/front-matter.ts';
import { skillFromFile, type SkillDefinition } from '../../../../functions/tools/skill/skill-definition.ts';
import { skillListingReminder } from '../../../../functions/tools/skill/skill-listing.ts';
import { argumentWords, skillPromptText } from '../../../../functions/tools/skill/skill-prompt.ts';

const file = (name: string, content: string) => skillFromFile({ name, dir: `/workspace/.claude/skills/${name}`, content });

describe('skill files', () => {
  it('reads the flat front matter skills use, and keeps what YAML would refuse as written', () => {
    const parsed = parseFrontMatter(
      '---\nname: "quoted: yes"\nflag: true\ncount: 3\nlist: [a, "b c"]\nitems:\n  - one\n  - two\nblock: |\n  line 1\n  line 2\nbad: [unclosed\n---\nbody\n',
    );
    expect(parsed.fields).toEqual({
      name: 'quoted: yes',
      flag: true,
      count: 3,
      list: ['a', 'b c'],
      items: ['one', 'two'],
      block: 'line 1\nline 2',
      bad: '[unclosed',
    });
    expect(parsed.body).toBe('body\n');
    expect(parseFrontMatter('no fence\n')).toEqual({ fields: {}, body: 'no fence\n' });
  });

  it("falls back to the body's first line, then to 'Skill', for the description", () => {
    expect(file('a', '\n## Title here\nmore\n').description).toBe('Title here');
    expect(file('b', '').description).toBe('Skill');
    expect(file('c', `${'x'.repeat(120)}\n`).description).toBe(`${'x'.repeat(97)}...`);
    expect(file('d', '---\ndescription: 42\n---\n').description).toBe('42');
  });

  it('splits arguments as a shell would and fills named, indexed and whole placeholders', () => {
    expect(argumentWords(`one "two three" 'four' fi\\ ve`)).toEqual(['one', 'two three', 'four', 'fi ve']);
    expect(argumentWords('unbalanced "quote here')).toEqual(['unbalanced', '"quote', 'here']);
    const skill = file('s', '---\narguments: [who]\n---\n$who/$0/$ARGUMENTS[1]/$2/$ARGUMENTS in ${CLAUDE_SKILL_DIR} for ${CLAUDE_SESSION_ID}\n');
    expect(skillPromptText(skill, 'ann bob', 'sess_1')).toBe(
      'Base directory for this skill: /workspace/.claude/skills/s\n\nann/ann/bob//ann bob in /workspace/.claude/skills/s for sess_1\n',
    );
    expect(skillPromptText(skill, undefined, 'sess_1')).toContain('$who/$0');
  });
});

describe('the skills listing', () => {
  const many = (n: number, description: string): SkillDefinition[] => Array.from({ length: n }, (_, i) => ({ ...file(`skill-${i}`, ''), description }));

  it('lists every description in full when they fit in 1% of the context window', () => {
    const text = skillListingReminder(many(2, 'd'.repeat(300)), 200_000)!;
    expect(text).toBe(
      `<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- skill-0: ${'d'.repeat(249)}…\n- skill-1: ${'d'.repeat(249)}…\n</system-reminder>\n`,
    );
  });

  it('cuts every description to an equal share past the budget, and shows names only when a share would be under 20', () => {
    const forty = skillListingReminder(many(40, 'd'.repeat(240)), 200_000)!;
    // 8,000 characters, less each entry's name, "- ", ": " and newline.
    const width = Math.floor((8000 - (10 * (7 + 4) + 30 * (8 + 4)) - 39) / 40);
    expect(forty).toContain(`- skill-0: ${'d'.repeat(width - 1)}…\n`);
    const tiny = skillListingReminder(many(40, 'd'.repeat(240)), 10_000)!;
    expect(tiny).toContain('\n- skill-0\n- skill-1\n');
  });

  it('leaves out skills the model may not load, and says nothing when none is left', () => {
    const hidden = file('h', '---\ndisable-model-invocation: true\n---\n');
    expect(skillListingReminder([hidden], 200_000)).toBeUndefined();
    expect(skillListingReminder([], 200_000)).toBeUndefined();
  });
});
