import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { readInstructionText } from './files/instruction-files.ts';
import { resolveWorkspacePath } from './files/workspace-path.ts';
import { defineOp } from './op.ts';

/** One skill as the repository holds it: its folder's name and its SKILL.md as written. */
export interface SkillFile {
  /** The folder's name under `.claude/skills/` (the skill's name). */
  name: string;
  /** Virtual path of the folder. */
  dir: string;
  /** SKILL.md's text, front matter included. */
  content: string;
}

export interface ReadSkillsResult {
  type: 'read_skills';
  /** Sorted by name; folders without a readable SKILL.md are left out. */
  skills: SkillFile[];
}

/** Where a repository keeps its skills. */
export const SKILLS_DIR = '/workspace/.claude/skills';

/** More skills than anyone writes by hand; the rest are left out rather than read. */
const MAX_SKILLS = 200;

/**
 * Reads the repository's skills (`.claude/skills/<name>/SKILL.md`) at a turn's start: one call
 * however many there are. A folder (or a link to one inside the workspace) without a SKILL.md
 * that is text of a sane size is not a skill.
 */
export const readSkillsOp = defineOp({
  schema: z.object({ type: z.literal('read_skills') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const root = await resolveWorkspacePath(ctx, SKILLS_DIR);
    const entries = root ? await fs.readdir(root.real, { withFileTypes: true }).catch(() => []) : [];
    const names = entries
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name)
      .sort()
      .slice(0, MAX_SKILLS);
    const skills: SkillFile[] = [];
    for (const name of names) {
      const dir = `${SKILLS_DIR}/${name}`;
      const content = await readInstructionText(ctx, `${dir}/SKILL.md`);
      if (content !== undefined) skills.push({ name, dir, content });
    }
    const result: ReadSkillsResult = { type: 'read_skills', skills };
    return { result };
  },
});
