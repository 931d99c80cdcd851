import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import { NO_EGRESS } from '../../../sandbox-runner/common/egress-mode.ts';
import { allowListSchema } from '../../../sandbox-runner/common/network-allow-list.ts';
import type { Deps } from '../../deps/deps.ts';
import { customAgentsSchema } from '../../session-settings/custom-agents.ts';
import { mcpServersSchema, mcpServersView } from '../../session-settings/mcp-config.ts';
import { setupSettingsSchema } from '../../session-settings/setup-settings.ts';
import { assertOutboundSettings } from '../outbound-settings.ts';
import { assertValidRules, QUESTION_TIMEOUT_MAX_SECONDS } from '../../session-settings/session-settings.ts';
import { permissionModeSchema, ruleListsSchema } from '../../permissions/types.ts';
import { NotFoundError, UserError } from '../../shared/errors.ts';
import { connectRepository, type ConnectDeps } from '../../github/connect-repository.ts';
import { DEFAULT_RATE_LIMIT } from '../../github/rate-limit.ts';
import { dropLayers } from '../../environments/environment-layer.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../../stores/github-store.ts';
import { MAX_TENANT_TEXT_CHARS } from './tenant-settings.ts';
import { createRouteApp, jsonBodyLimit, type ApiEnv } from '../route-app.ts';
import { budgetsApiSchema, errorResponses, idempotencyKeyHeader, json, nextCursorSchema, pageQuerySchema } from '../schemas/common.ts';
import { MAX_JSON_BODY_BYTES } from '../validate.ts';

export { githubWebhookRoutes } from './github-webhook.ts';
import { githubItemRoutes } from './github-items.ts';

/** `owner/name` as GitHub allows them (owner: letters, digits, hyphens; name: also `.` and `_`). */
export const repositoryNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/, 'expected "owner/name"')
  .refine((s) => !s.endsWith('/.') && !s.endsWith('/..'), 'expected "owner/name"');

export const githubRepoSettingsSchema = z
  .strictObject({
    permissionMode: permissionModeSchema.optional(),
    rules: ruleListsSchema.optional(),
    allowedDomains: allowListSchema.optional(),
    budgets: budgetsApiSchema.optional(),
    agents: customAgentsSchema.optional().describe("Custom sub-agents every run's session offers the Agent tool"),
    mcpServers: mcpServersSchema
      .optional()
      .describe('MCP servers every run\'s session connects to, from the API side under its outbound policy; header values are shown as "[redacted]"'),
    setup: setupSettingsSchema
      .optional()
      .describe("Set-up steps every run's session runs before its first turn (instead of, or without, the repository's .stratus/setup.sh)"),
    instructions: z
      .string()
      .max(MAX_TENANT_TEXT_CHARS)
      .optional()
      .describe("Instructions every run's session gets, after the tenant's and before the repository's own CLAUDE.md and AGENTS.md (docs/context.md)"),
    reviews: z
      .enum(['mention', 'any'])
      .optional()
      .describe("Which reviews on a Stratus pull request a run answers: those mentioning Stratus (default), or any writer's review"),
    failingChecks: z
      .strictObject({
        enabled: z.boolean().describe('Fix the failing checks of Stratus pull requests (off unless set)'),
        maxAttempts: z.number().int().min(1).max(20).optional().describe('Attempts per pull request before a comment says they are used up (default 2)'),
      })
      .optional()
      .describe('Failed check suites, check runs and workflow runs on a Stratus pull request start a run that pushes a fix'),
    planFirst: z
      .boolean()
      .optional()
      .describe(
        "A run starts in plan mode and posts its plan as a comment; a writer's reply (`@stratus approve`, or `@stratus reject …` with what to change) decides it",
      ),
    followThrough: z
      .strictObject({
        rateLimit: z
          .number()
          .int()
          .min(1)
          .max(100)
          .optional()
          .describe(
            `Runs an issue or pull request may start per hour (default ${DEFAULT_RATE_LIMIT}); past it one comment says so and triggers are refused (\`rate_limited\`) until the hour is over`,
          ),
      })
      .optional()
      .describe('What happens after the first run'),
    questionTimeoutSeconds: z
      .number()
      .int()
      .min(0)
      .max(QUESTION_TIMEOUT_MAX_SECONDS)
      .optional()
      .describe(
        "Above 0, runs are attended for the agent's questions: a question is posted as a comment, a writer's reply answers it and the run goes on; unanswered after this long, the agent goes on with its own choice. Absent or 0: a question gets no answer at once.",
      ),
  })
  .openapi('GithubRepositorySettings');

export const connectRepositoryBody = z
  .strictObject({
    repository: repositoryNameSchema,
    label: z.string().min(1).max(50).default('stratus').describe('Labelling an issue with it starts a run'),
    mention: z
      .string()
      .regex(/^@[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, 'expected "@handle"')
      .default('@stratus')
      .describe('A writer mentioning it in a comment starts a run'),
    settings: githubRepoSettingsSchema.optional(),
    allowBots: z.boolean().default(false).describe('Let bot accounts trigger runs'),
  })
  .openapi('ConnectRepository');

export const patchRepositoryBody = z
  .strictObject({
    label: z.string().min(1).max(50).optional(),
    mention: z
      .string()
      .regex(/^@[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, 'expected "@handle"')
      .optional(),
    settings: githubRepoSettingsSchema.optional(),
    allowBots: z.boolean().optional(),
  })
  .openapi('UpdateRepository');

type GithubRouteDeps = Pick<Deps, 'config' | 'clock' | 'outbound' | 'workspaceCredentials' | 'workspaceStorage' | 'githubItems'> & ConnectDeps;

export const repositorySchema = z
  .object({
    repository: z.string().describe('`owner/name` as GitHub last reported it (a rename is picked up from the next delivery)'),
    repositoryId: z
      .number()
      .int()
      .nullable()
      .describe(
        "GitHub's repository id, which deliveries are routed by; null for a connection made before ids were recorded (it routes nothing until re-connected)",
      ),
    installationId: z.number().int().nullable().describe('The claimed GitHub App installation whose repository list holds it; null with a plain token'),
    label: z.string(),
    mention: z.string(),
    allowBots: z.boolean(),
    settings: githubRepoSettingsSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('GithubRepository');

const runSchema = z
  .object({
    id: z.string(),
    deliveryId: z.string(),
    repository: z.string(),
    number: z.number().int().describe('The issue or pull request number'),
    kind: z.enum(['issue', 'pull_request']),
    trigger: z
      .enum(['label', 'mention', 'review', 'check', 'closed', 'queued', 'answer', 'resumed'])
      .describe(
        "label, mention; review: review comments on a Stratus PR; check: its failing checks; closed: the PR was merged or closed (not a run); queued: a run of its own for comments queued while another run worked; answer: a reply comment that answered the agent's question; resumed: the agent's question or plan was closed outside GitHub (the API, the console, the question's timeout) and the run went on",
      ),
    sender: z.string(),
    sessionId: z.string().nullable(),
    branch: z.string().nullable(),
    commit: z.string().nullable(),
    pullRequestUrl: z.string().nullable(),
    outcome: z
      .string()
      .describe(
        "queued, running, awaiting_plan (a plan-first run waits for a reply), awaiting_answer (the agent asked a question in a comment; a writer's reply goes on), pr_opened, pr_updated, draft_pr_opened, no_changes, push_rejected, refused, already_running, queued_into_run (the comment joined the run working on its item), rate_limited, failed; budget_spent (the work item's budget is spent: a comment, no run), budget_raised, checks_limit_reached; merged, closed_unmerged (trigger closed)",
      ),
    detail: z.string().nullable(),
    cost: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int(), usd: z.number() }).nullable(),
    item: z
      .object({
        runs: z.number().int(),
        costUsd: z.number(),
        tokens: z.number().int(),
        limits: z.object({ maxRuns: z.number().int().optional(), maxCostUsd: z.number().optional(), maxTokens: z.number().int().optional() }),
      })
      .nullable()
      .describe("The work item's one budget after this run: what every run on the issue or PR spent, and its limits (the repository's budgets plus raises)"),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('GithubRun');

const tags = ['GitHub'];
const repoParams = z.object({ owner: z.string().describe('Repository owner'), name: z.string().describe('Repository name') });

const connect = createRoute({
  method: 'post',
  path: '/repositories',
  tags,
  summary: 'Connect a repository',
  description:
    'Its issues and pull requests start runs when labelled or mentioned (the webhook). With a GitHub App the repository must be in the repository list of an installation this tenant claimed (`POST /v1/github/installations/setup-url`, or an admin); with a plain `STRATUS_GITHUB_TOKEN` only the admin connects (`POST /v1/admin/github/repositories`). 403 without that proof, whether or not another tenant connected it; 409 when this tenant already did.',
  middleware: [jsonBodyLimit(MAX_JSON_BODY_BYTES)] as const,
  request: { headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: connectRepositoryBody } }, required: true } },
  responses: { 201: json(repositorySchema, 'The connected repository'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
});
const listRepositories = createRoute({
  method: 'get',
  path: '/repositories',
  tags,
  summary: "The tenant's connected repositories",
  request: { query: pageQuerySchema },
  responses: {
    200: json(z.object({ repositories: z.array(repositorySchema), nextCursor: nextCursorSchema }), 'One page of repositories'),
    ...errorResponses(400),
  },
});
const getRepository = createRoute({
  method: 'get',
  path: '/repositories/{owner}/{name}',
  tags,
  summary: 'One connected repository',
  request: { params: repoParams },
  responses: { 200: json(repositorySchema, 'The repository'), ...errorResponses(404) },
});
const patchRepository = createRoute({
  method: 'patch',
  path: '/repositories/{owner}/{name}',
  tags,
  summary: "Change a repository's label, mention, settings or bot rule",
  middleware: [jsonBodyLimit(MAX_JSON_BODY_BYTES)] as const,
  request: { params: repoParams, body: { content: { 'application/json': { schema: patchRepositoryBody } }, required: false } },
  responses: { 200: json(repositorySchema, 'The repository'), ...errorResponses(400, 404, 413, 415) },
});
const disconnect = createRoute({
  method: 'delete',
  path: '/repositories/{owner}/{name}',
  tags,
  summary: 'Disconnect a repository',
  description: "Its runs stop starting, and its cached environments (the set-up's dependency layers) are removed.",
  request: { params: repoParams },
  responses: { 204: { description: 'Disconnected' }, ...errorResponses(404) },
});
const listRuns = createRoute({
  method: 'get',
  path: '/runs',
  tags,
  summary: 'Runs started from GitHub, newest first',
  request: { query: pageQuerySchema },
  responses: { 200: json(z.object({ runs: z.array(runSchema), nextCursor: nextCursorSchema }), 'One page of runs'), ...errorResponses(400) },
});

/** Connected repositories and the runs they started, per tenant (`/v1/github/...`, bearer auth). */
export function githubRoutes(deps: GithubRouteDeps) {
  const app = createRouteApp();
  app.openapi(connect, connectHandler(deps));
  app.openapi(listRepositories, async (c) => {
    const page = await deps.github.listRepos(c.get('tenantId'), c.req.valid('query'));
    return c.json({ repositories: page.items.map(repositoryView), nextCursor: page.nextCursor ?? null }, 200);
  });
  app.openapi(getRepository, async (c) => c.json(repositoryView(await deps.github.getRepoForTenant(repoParam(c.req.valid('param')), c.get('tenantId'))), 200));
  app.openapi(patchRepository, patchHandler(deps));
  app.openapi(disconnect, async (c) => {
    const current = await deps.github.getRepoForTenant(repoParam(c.req.valid('param')), c.get('tenantId'));
    // Its cached environments first: a failure leaves the repository connected, so the call can be repeated.
    const [owner, name] = current.fullName.split('/') as [string, string];
    await dropLayers(deps, c.get('tenantId'), { owner, name });
    await deps.github.deleteRepo(current.repository);
    return c.body(null, 204);
  });
  app.openapi(listRuns, async (c) => {
    const page = await deps.github.listRuns(c.get('tenantId'), c.req.valid('query'));
    return c.json({ runs: page.items.map(runView), nextCursor: page.nextCursor ?? null }, 200);
  });
  app.route('/', githubItemRoutes(deps));
  return app;
}

function connectHandler(deps: GithubRouteDeps): RouteHandler<typeof connect, ApiEnv> {
  return async (c) => {
    const body = c.req.valid('json');
    checkSettings(deps, body.settings);
    const { repository, ...settings } = body;
    const record = await connectRepository(deps, { tenantId: c.get('tenantId'), fullName: repository, by: 'tenant', ...settings });
    return c.json(repositoryView(record), 201);
  };
}

function patchHandler(deps: GithubRouteDeps): RouteHandler<typeof patchRepository, ApiEnv> {
  return async (c) => {
    const body = c.req.valid('json');
    checkSettings(deps, body.settings);
    const current = await deps.github.getRepoForTenant(repoParam(c.req.valid('param')), c.get('tenantId'));
    const updated: GithubRepoRecord = { ...current, ...body, updatedAt: new Date(deps.clock()).toISOString() };
    await deps.github.putRepo(updated);
    return c.json(repositoryView(updated), 200);
  };
}

function repoParam(params: { owner: string; name: string }): string {
  const full = `${params.owner}/${params.name}`;
  // A name that could never be connected is simply not connected.
  if (!repositoryNameSchema.safeParse(full).success) throw new NotFoundError(`Repository ${full.slice(0, 200)} is not connected.`);
  return full;
}

export function checkSettings(deps: Pick<Deps, 'config' | 'outbound'>, settings: z.output<typeof githubRepoSettingsSchema> | undefined): void {
  assertValidRules(settings?.rules, 'settings.rules');
  if (settings?.allowedDomains?.length && deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
  assertOutboundSettings(deps.outbound, settings);
}

export function repositoryView(r: GithubRepoRecord) {
  return {
    repository: r.fullName,
    repositoryId: r.repositoryId ?? null,
    installationId: r.installationId ?? null,
    label: r.label,
    mention: r.mention,
    allowBots: r.allowBots,
    // MCP header values (tokens) never leave the record.
    settings: r.settings?.mcpServers ? { ...r.settings, mcpServers: mcpServersView(r.settings.mcpServers) } : (r.settings ?? {}),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function runView(r: GithubRunRecord) {
  return {
    id: r.runId,
    deliveryId: r.deliveryId,
    repository: r.repository,
    number: r.number,
    kind: r.kind,
    trigger: r.trigger,
    sender: r.sender,
    sessionId: r.sessionId ?? null,
    branch: r.branch ?? null,
    commit: r.commit ?? null,
    pullRequestUrl: r.pullRequestUrl ?? null,
    outcome: r.outcome,
    detail: r.detail ?? null,
    cost: r.cost ?? null,
    item: r.item ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
