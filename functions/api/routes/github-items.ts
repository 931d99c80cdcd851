import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { itemLimits } from '../../github/item-budget.ts';
import { githubStats } from '../../github/pr-stats.ts';
import { NotFoundError, UserError } from '../../shared/errors.ts';
import { itemKeyOf } from '../../stores/github-item-store.ts';
import { threadKey } from '../../stores/github-store.ts';
import { createRouteApp, jsonBodyLimit } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json } from '../schemas/common.ts';
import { DEFAULT_BODY_BYTES } from '../body-limit.ts';

type ItemRouteDeps = Pick<Deps, 'github' | 'githubItems' | 'clock'>;

const tags = ['GitHub'];

const itemSchema = z
  .object({
    repository: z.string(),
    number: z.number().int().describe('The issue (or the issue a Stratus PR came from) whose runs share the budget'),
    runs: z.number().int(),
    costUsd: z.number(),
    tokens: z.number().int(),
    limits: z
      .object({ maxRuns: z.number().int().optional(), maxCostUsd: z.number().optional(), maxTokens: z.number().int().optional() })
      .describe("The repository's budgets (maxTurns counted as runs) plus every raise; absent: no limit of that kind"),
  })
  .openapi('GithubWorkItem');

const raiseBody = z
  .strictObject({
    addUsd: z.number().positive().max(1_000_000).optional(),
    addTokens: z.number().int().positive().max(1_000_000_000_000).optional(),
    addRuns: z.number().int().positive().max(10_000).optional(),
  })
  .refine((b) => b.addUsd !== undefined || b.addTokens !== undefined || b.addRuns !== undefined, 'give at least one of addUsd, addTokens, addRuns')
  .openapi('RaiseItemBudget');

const itemParams = z.object({
  owner: z.string().describe('Repository owner'),
  name: z.string().describe('Repository name'),
  number: z.coerce.number().int().positive().describe('Issue or pull request number'),
});

const raise = createRoute({
  method: 'post',
  path: '/repositories/{owner}/{name}/items/{number}/budget',
  tags,
  summary: "Raise an issue's or PR's budget",
  description:
    "Each of a repository's `maxCostUsd`, `maxTokens` and `maxTurns` (runs) counts per issue or pull request over every run on it; a spent item answers triggers with a comment. The amounts given are added to the item's limits (as a writer's `@stratus budget +5usd` comment does).",
  middleware: [jsonBodyLimit(DEFAULT_BODY_BYTES)] as const,
  request: { params: itemParams, headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: raiseBody } }, required: true } },
  responses: { 200: json(itemSchema, 'The item after the raise'), ...errorResponses(400, 404, 413, 415, 422) },
});

const getItem = createRoute({
  method: 'get',
  path: '/repositories/{owner}/{name}/items/{number}',
  tags,
  summary: "An issue's or PR's spend over all its runs, and its limits",
  request: { params: itemParams },
  responses: { 200: json(itemSchema, 'The item'), ...errorResponses(404) },
});

const statsQuery = z.object({
  from: z.iso.datetime({ offset: true }).optional().describe('Start of the period (default: 30 days before `to`)'),
  to: z.iso.datetime({ offset: true }).optional().describe('End of the period, exclusive (default: now)'),
  repository: z.string().max(200).optional().describe('Only this `owner/name`'),
});

const statsSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    repositories: z.array(
      z.object({
        repository: z.string(),
        pullRequestsOpened: z.number().int(),
        merged: z.number().int(),
        closedUnmerged: z.number().int(),
        runs: z.number().int().describe('Runs that ran a turn'),
        costUsd: z.number().describe('What those runs cost'),
        costPerMergedPrUsd: z.number().nullable().describe("What the merged PRs' work items cost over all their runs, per merged PR; null without a merge"),
      }),
    ),
  })
  .openapi('GithubStats');

const stats = createRoute({
  method: 'get',
  path: '/stats',
  tags,
  summary: 'What the GitHub runs achieved, per repository and period',
  description:
    'Pull requests opened, merged and closed unmerged (recorded from `pull_request.closed` on Stratus PRs), runs, their cost, and the cost per merged PR, over the runs and closings recorded in the period.',
  request: { query: statsQuery },
  responses: { 200: json(statsSchema, 'The figures'), ...errorResponses(400) },
});

const DAY_MS = 86_400_000;

/** Work items' budgets and the results statistics (`/v1/github/...`, bearer auth). */
export function githubItemRoutes(deps: ItemRouteDeps) {
  const app = createRouteApp();
  app.openapi(raise, async (c) => {
    const { owner, name, number } = c.req.valid('param');
    const body = c.req.valid('json');
    const found = await itemOf(deps, `${owner}/${name}`, number, c.get('tenantId'));
    const by = { usd: body.addUsd, tokens: body.addTokens, runs: body.addRuns };
    const item = await deps.githubItems.raise(found.itemKey, by, new Date(deps.clock()).toISOString());
    return c.json(view(found, item), 200);
  });
  app.openapi(getItem, async (c) => {
    const { owner, name, number } = c.req.valid('param');
    const found = await itemOf(deps, `${owner}/${name}`, number, c.get('tenantId'));
    return c.json(view(found, await deps.githubItems.get(found.itemKey)), 200);
  });
  app.openapi(stats, async (c) => {
    const q = c.req.valid('query');
    const to = q.to ? new Date(q.to) : new Date(deps.clock());
    const from = q.from ? new Date(q.from) : new Date(to.getTime() - 30 * DAY_MS);
    if (!(from < to)) throw new UserError('`from` must be before `to`.');
    const period = { from: from.toISOString(), to: to.toISOString(), ...(q.repository ? { repository: q.repository } : {}) };
    return c.json({ from: period.from, to: period.to, repositories: await githubStats(deps, c.get('tenantId'), period) }, 200);
  });
  return app;
}

/** The item an issue or PR number counts against: a Stratus PR's is its issue's. */
async function itemOf(deps: ItemRouteDeps, fullName: string, number: number, tenantId: string) {
  const repo = await deps.github.getRepoForTenant(fullName, tenantId);
  if (repo.repositoryId === undefined) throw new NotFoundError(`Repository ${repo.fullName} was connected before ids were recorded; connect it again.`);
  const thread = await deps.github.getThread({ id: repo.repositoryId, fullName: repo.fullName }, number);
  const key = thread && (thread.tenantId === undefined || thread.tenantId === tenantId) ? thread.threadKey : threadKey(repo.repositoryId, number);
  return { repo, number: Number(key.split('#').at(-1)), itemKey: itemKeyOf(key) };
}

function view(found: Awaited<ReturnType<typeof itemOf>>, item: Awaited<ReturnType<ItemRouteDeps['githubItems']['get']>>) {
  return {
    repository: found.repo.fullName,
    number: found.number,
    runs: item.runs,
    costUsd: item.costUsd,
    tokens: item.tokens,
    limits: itemLimits(found.repo.settings?.budgets, item),
  };
}
