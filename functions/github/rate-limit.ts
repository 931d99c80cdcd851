import type { Deps } from '../deps/deps.ts';
import type { GithubRepoAccess } from '../github-api/github-client.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../stores/github-store.ts';
import { progressTexts } from './progress-comment.ts';

/** Runs an issue or pull request may start per hour when the repository sets no `followThrough.rateLimit`. */
export const DEFAULT_RATE_LIMIT = 10;

/**
 * Counts this run against its item's hourly limit; past it, the run ends `rate_limited` and the
 * first one refused in the hour leaves one comment saying so. Another bot that answers every
 * Stratus comment (with `allowBots` on) is stopped here: each of its triggers is a run counted.
 */
export async function overRateLimit(
  deps: Pick<Deps, 'githubItemRates' | 'clock'> & { config: Pick<Deps['config'], 'github'> },
  o: { itemKey: string; repo: GithubRepoRecord; trigger: GithubTrigger; access: GithubRepoAccess; log: Logger },
  save: (patch: Partial<GithubRunRecord>) => Promise<GithubRunRecord>,
): Promise<GithubRunRecord | undefined> {
  const limit = o.repo.settings?.followThrough?.rateLimit ?? DEFAULT_RATE_LIMIT;
  const answer = await deps.githubItemRates.countRun(o.itemKey, limit, deps.clock());
  if (answer.allowed) return undefined;
  o.log.warn('rate limit of the issue reached; no run', { limit, firstRefusal: answer.firstRefusal });
  let note = '';
  if (answer.firstRefusal) {
    const body = progressTexts(deps.config.github.consoleUrl).rateLimited(limit);
    const { owner, name, number } = o.trigger;
    await o.access.octokit.rest.issues.createComment({ owner, repo: name, issue_number: number, body }).catch((err: unknown) => {
      o.log.warn('could not post the rate-limit comment', { error: errorMessage(err) });
      note = ` The comment saying so could not be posted: ${errorMessage(err).slice(0, 300)}`;
    });
  }
  return save({ outcome: 'rate_limited', detail: `This item started ${limit} runs in the last hour, the repository's limit.${note}` });
}
