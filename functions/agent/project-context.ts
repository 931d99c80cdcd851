import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { INSTRUCTIONS_FILE_NAMES } from '../tools/instructions-text.ts';
import { skillFromFile, type SkillDefinition } from '../tools/skill/skill-definition.ts';
import { skillListingReminder } from '../tools/skill/skill-listing.ts';
import { renderEnvironment, takeEnvironmentSnapshot } from './environment-snapshot.ts';
import { instructionsBlock, type SettingInstructions } from './instructions-block.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import type { TurnDeps } from './turn-deps.ts';

/** The instructions files read at every turn's start, in this order (docs/context.md). */
const ROOT_INSTRUCTIONS_PATHS = ['/workspace/CLAUDE.md', '/workspace/.claude/CLAUDE.md', '/workspace/AGENTS.md'];

/** What a turn tells the model about its project, for the turn itself and its sub-agents. */
export interface ProjectContext {
  /** Stratus's system prompt, the operator's and the tenant's additions, the environment section. */
  system: string;
  /** The session's environment section and git snapshot (as stored with it). */
  environment: string;
  /** The block that opens the first user message of every request: instructions and the date. */
  userContext: string;
  /** The same block without instructions, for sub-agents that go without them (Explore, Plan). */
  userContextWithoutInstructions: string;
  /** The repository's skills (`.claude/skills/`), which the Skill tool loads; the block above lists them. */
  skills: SkillDefinition[];
}

type ProjectContextDeps = Pick<TurnDeps, 'config' | 'tenantSettings'>;

/**
 * Loads what the model is told about its project at a turn's start: the tenant's settings, the
 * environment section (taken once per session and kept in `workspace.environmentSection`, which the
 * recorder stores with the session), and the root instructions files with their imports, read
 * from the workspace version the turn starts on, and its skills. Reads under the workspace then bring the
 * instructions of subdirectories along (`workspace.instructionsLookup`).
 */
export async function loadProjectContext(
  deps: ProjectContextDeps,
  session: SessionRecord,
  workspace: WorkspaceSession,
  startedAt: number,
): Promise<ProjectContext> {
  const { projectContext: settings, model } = deps.config;
  const date = new Date(startedAt).toISOString().slice(0, 10);
  const tenant = await deps.tenantSettings.settingsOf(session.tenantId);
  const facts = { model: model.name, date: session.createdAt.slice(0, 10), ...(session.baseBranch ? { baseBranch: session.baseBranch } : {}) };
  const limits = { maxFileChars: settings.maxFileChars, maxDepth: settings.maxImportDepth };
  // An empty workspace (version 0: never seeded, imported or written) has no files and no git to
  // look at: no runner call, and nothing stored, so the snapshot is taken once there is something.
  const empty = workspace.version === 0;
  if (!empty) workspace.environmentSection ??= session.environmentSection ?? (await takeEnvironmentSnapshot(workspace, facts));
  const environment = workspace.environmentSection ?? renderEnvironment({}, facts);
  const files = empty ? [] : (await workspace.run({ type: 'read_instructions', paths: ROOT_INSTRUCTIONS_PATHS, limits })).files;
  const skills = empty ? [] : (await workspace.run({ type: 'read_skills' })).skills.map(skillFromFile);
  // The skills go first, in a reminder of their own, as the reference lists them.
  const listing = skillListingReminder(skills, model.contextWindow) ?? '';
  workspace.instructionsLookup = { names: [...INSTRUCTIONS_FILE_NAMES], limits, loaded: files.map((f) => f.path) };
  const fromSettings: SettingInstructions = {
    ...(tenant.instructions ? { tenant: tenant.instructions } : {}),
    ...(session.repositoryInstructions ? { repository: session.repositoryInstructions } : {}),
  };
  return {
    system: buildSystemPrompt({ operator: settings.systemPromptAppend, tenant: tenant.systemPromptAppend }, environment),
    environment,
    userContext: listing + instructionsBlock({ settings: fromSettings, files, date, maxTotalChars: settings.maxTotalChars }),
    userContextWithoutInstructions: listing + instructionsBlock({ settings: {}, files: [], date, maxTotalChars: settings.maxTotalChars }),
    skills,
  };
}
