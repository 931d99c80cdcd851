/**
 * Which ops a runner deployment serves (STRATUS_RUNNER_OPS). The sandbox runner serves them all;
 * the git function (outside the runner's VPC, with the internet) serves only the harness's own
 * git operations, which run the runner's git and never a command: a request for anything else
 * there is refused before it is parsed further, so no command ever runs beside a GitHub token or
 * with that function's network. The harness routes these ops there (runner-client.ts).
 */
export type RunnerOpsScope = 'all' | 'git';

/** The ops that carry a GitHub token and run only harness-owned git code. */
export const HARNESS_GIT_OPS: ReadonlySet<string> = new Set(['git_checkout', 'git_publish']);

export function runnerOpsScopeFromEnv(value: string | undefined): RunnerOpsScope {
  if (!value || value === 'all') return 'all';
  if (value === 'git') return 'git';
  throw new Error(`STRATUS_RUNNER_OPS must be all or git, not "${value}".`);
}

/** The refusal a git-scoped runner answers for any other op. */
export function opOutsideScope(opType: string): string {
  return `This runner serves only the harness's git operations (${[...HARNESS_GIT_OPS].join(', ')}), not "${opType}".`;
}
