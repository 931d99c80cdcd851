import type { WorkspaceSession } from '../runner-client/workspace-session.ts';

/** Separates the fields the snapshot command prints (an ASCII record separator: never in git's output). */
const FIELD = '\x1e';
/** `git status --short` beyond this is cut with a note (a generated tree can list thousands of files). */
const MAX_STATUS_CHARS = 4_000;
const RECENT_COMMITS = 5;
/** Where the git snapshot starts in the section (sub-agents that go without it cut it there). */
export const GIT_SNAPSHOT_HEADING = '# Git snapshot';

/**
 * Run in the session's sandbox like any command (never by the runner itself: a repository's own
 * config could name programs for git to run). A subshell, so the session's cwd does not move;
 * `--no-optional-locks` so reading the status does not rewrite the index.
 */
const SNAPSHOT_COMMAND = [
  '(cd /workspace || exit 0',
  'if [ "$(git rev-parse --is-inside-work-tree 2>/dev/null)" != true ]; then exit 0; fi',
  `printf 'git${FIELD}'; git branch --show-current 2>/dev/null; printf '${FIELD}'`,
  'main=$(git symbolic-ref --short -q refs/remotes/origin/HEAD 2>/dev/null | sed "s#^origin/##")',
  'if [ -z "$main" ]; then for b in main master; do if git show-ref -q --verify "refs/heads/$b"; then main=$b; break; fi; done; fi',
  `printf '%s${FIELD}' "$main"`,
  `git --no-optional-locks status --short 2>/dev/null | head -c ${MAX_STATUS_CHARS + 1}; printf '${FIELD}'`,
  `git --no-optional-locks log --oneline -n ${RECENT_COMMITS} 2>/dev/null)`,
].join('\n');

export interface EnvironmentFacts {
  model: string;
  /** The day the session was created (YYYY-MM-DD, UTC). */
  date: string;
  /** The branch a GitHub run will open its pull request against, when the repository does not say. */
  baseBranch?: string;
}

/**
 * The environment section and git snapshot of a session: what the model should know about
 * where it runs, taken once by the session's first turn (right after its workspace was filled:
 * seeded, imported, or checked out by a GitHub run) and stored with the session, so every later
 * request ends its system prompt with the same bytes. docs/context.md shows it.
 */
export async function takeEnvironmentSnapshot(workspace: WorkspaceSession, facts: EnvironmentFacts): Promise<string> {
  const result = await workspace.run({ type: 'bash', command: SNAPSHOT_COMMAND, timeoutMs: 30_000, background: 'never' });
  return renderEnvironment(parseSnapshot(result.output), facts);
}

export interface SnapshotFields {
  git?: { branch: string; mainBranch: string; status: string; commits: string };
}

function parseSnapshot(output: string): SnapshotFields {
  const [marker, branch = '', mainBranch = '', status = '', commits = ''] = output.split(FIELD);
  const fields: SnapshotFields = {};
  if (marker === 'git') fields.git = { branch: branch.trim(), mainBranch: mainBranch.trim(), status: status.replace(/\n+$/, ''), commits: commits.trim() };
  return fields;
}

export function renderEnvironment(fields: SnapshotFields, facts: EnvironmentFacts): string {
  const lines = [
    '# Environment',
    'Facts about where you run, noted when this session began:',
    '- Working directory: /workspace',
    `- Git repository: ${fields.git ? 'yes' : 'no (this workspace has no git repository; git commands will fail)'}`,
    '- Platform: linux, in a sandbox; each Bash command runs in a fresh bash shell',
    `- Model: ${facts.model}`,
    `- Session started: ${facts.date}`,
  ];
  if (!fields.git) return lines.join('\n');
  const { git } = fields;
  const main = git.mainBranch || facts.baseBranch;
  return [
    ...lines,
    '',
    GIT_SNAPSHOT_HEADING,
    'The repository as it was when this session began. It is not updated while you work: run git for its current state.',
    `Current branch: ${git.branch || '(detached HEAD)'}`,
    `Main branch (the usual base of a pull request): ${main || '(unknown)'}`,
    `Status:\n${statusText(git.status)}`,
    `Recent commits:\n${git.commits || '(no commits yet)'}`,
  ].join('\n');
}

function statusText(status: string): string {
  if (status === '') return '(clean)';
  if (status.length <= MAX_STATUS_CHARS) return status;
  return `${status.slice(0, MAX_STATUS_CHARS)}\n[Cut by Stratus: the status is longer than ${MAX_STATUS_CHARS.toLocaleString('en-US')} characters. Run git status for all of it.]`;
}
