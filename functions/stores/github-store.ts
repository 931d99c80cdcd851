import type { CustomAgent } from '../session-settings/custom-agents.ts';
import type { McpServers } from '../session-settings/mcp-config.ts';
import type { SetupSettings } from '../session-settings/setup-settings.ts';
import type { Budgets } from './budgets.ts';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RuleLists, PermissionMode } from '../permissions/types.ts';
import { NotFoundError } from '../shared/errors.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import { eachOfTenant, queryByTenant } from './tenant-index.ts';

/** How a connected repository's runs are set up. */
export interface GithubRepoSettings {
  permissionMode?: PermissionMode;
  rules?: RuleLists;
  allowedDomains?: string[];
  budgets?: Budgets;
  /** Custom sub-agents and MCP servers every run's session gets (as a session's own settings). */
  agents?: CustomAgent[];
  mcpServers?: McpServers;
  /** Set-up steps every run's session runs before its first turn (docs/environments.md). */
  setup?: SetupSettings;
  /** Instructions every run's session gets, where a user's own instructions would go (docs/context.md). */
  instructions?: string;
  /** Which reviews on a Stratus PR are answered: those mentioning Stratus (default) or any writer's. */
  reviews?: 'mention' | 'any';
  /** Whether failing checks on a Stratus PR start a fix, and how many attempts per PR (default 2). */
  failingChecks?: { enabled: boolean; maxAttempts?: number };
  /** "Plan first": a run starts in plan mode, posts its plan as a comment and goes on when a writer's reply approves it. */
  planFirst?: boolean;
  /** What happens after the first run (functions/github/rate-limit.ts); not a session setting. */
  followThrough?: { rateLimit?: number };
  /**
   * How long the agent's questions wait for a writer's reply comment; set (above 0), runs are
   * attended for questions. Absent: runs are unattended and a question gets "no answer" at once.
   */
  questionTimeoutSeconds?: number;
}

export interface GithubRepoRecord {
  /**
   * The key: `gh:<repositoryId>` (`connectionKey`). A connection made before ids were recorded is
   * keyed by `owner/name` in lower case and has no `repositoryId`: it routes no delivery until it
   * is moved to its id (docs/security.md, "Connections from before ids").
   */
  repository: string;
  /** `owner/name` as GitHub last reported it (a rename is picked up from the next delivery). */
  fullName: string;
  tenantId: string;
  /** GitHub's numeric repository id: deliveries are routed by it, never by the name. */
  repositoryId?: number;
  /** With a GitHub App: the installation (claimed by `tenantId`) whose repository list holds it. */
  installationId?: number;
  createdAt: string;
  updatedAt: string;
  label: string;
  mention: string;
  allowBots: boolean;
  settings?: GithubRepoSettings;
}

export interface GithubRunRecord {
  runId: string;
  tenantId: string;
  createdAt: string;
  updatedAt: string;
  deliveryId: string;
  repository: string;
  /** The issue or pull request the run came from. */
  number: number;
  kind: 'issue' | 'pull_request';
  /** closed: not a run but a Stratus PR merged or closed (`outcome` merged or closed_unmerged: functions/github/pr-stats.ts);
   * queued: a run of its own for a comment queued while another run worked; answer: a reply that answered the agent's question. */
  trigger: 'label' | 'mention' | 'review' | 'check' | 'closed' | 'queued' | 'answer' | 'resumed';
  sender: string;
  sessionId?: string;
  branch?: string;
  commit?: string;
  pullRequestUrl?: string;
  /** queued, running, awaiting_plan, awaiting_answer, pr_opened, pr_updated, draft_pr_opened, no_changes, push_rejected, refused, already_running, queued_into_run, rate_limited, failed, and those of functions/github/item-run.ts and pr-stats.ts. */
  outcome: string;
  detail?: string;
  cost?: { inputTokens: number; outputTokens: number; usd: number };
  /** The work item's budget after the run (functions/github/item-budget.ts); on a closed record, what the item cost in all. */
  item?: { runs: number; costUsd: number; tokens: number; limits: { maxRuns?: number; maxCostUsd?: number; maxTokens?: number } };
}

export interface GithubThreadRecord {
  threadKey: string;
  /** Set on a Stratus pull request's key: the thread of the issue it came from. */
  aliasOf?: string;
  tenantId?: string;
  sessionId?: string;
  branch?: string;
  /** The pull request's base branch. */
  baseBranch?: string;
  /** The commit the branch points at (the last push, or where the work started). */
  headSha?: string;
  pullRequest?: { number: number; url: string };
  progressCommentId?: number;
  /** The agent's question the thread's session waits on: a writer's next comment answers it. */
  waitingQuestion?: { sessionId: string; toolUseId: string; commentId: number };
  /** The trigger of the last run that worked on it: a wait closed outside GitHub goes on as that run (functions/github/resumed-run.ts). */
  lastTrigger?: GithubTrigger;
  /** The run working on it now; a second trigger meanwhile is told so instead of starting another. */
  activeRunId?: string;
  activeSince?: number;
  /** When the holding run is over at the latest (its worker's deadline): past it, the hold belongs to a dead worker. */
  heldUntil?: number;
}

/** A delivery record lives a week: GitHub redelivers for days at most. */
const DELIVERY_TTL_SECONDS = 7 * 24 * 3_600;

/** The key of a repository's connection: its GitHub id, which a rename or a new owner of the name never changes. */
export function connectionKey(repositoryId: number): string {
  return `gh:${repositoryId}`;
}

/** The key of an issue's thread: the repository's id and the number (a name that changes hands never reaches it). */
export function threadKey(repositoryId: number, number: number): string {
  return `gh:${repositoryId}#${number}`;
}

/** The key threads had before repository ids were recorded: `owner/name#number` in lower case. */
function legacyThreadKey(fullName: string, number: number): string {
  return `${fullName.toLowerCase()}#${number}`;
}

/** Connected repositories, deliveries, runs and threads of the GitHub integration, in DynamoDB. */
export class GithubStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: { repos: string; deliveries: string; runs: string; threads: string },
  ) {}

  /** Connects a repository; false when a connection with the same key exists (whoever's it is). */
  async createRepo(record: GithubRepoRecord): Promise<boolean> {
    try {
      await this.db.send(new PutCommand({ TableName: this.tables.repos, Item: record, ConditionExpression: 'attribute_not_exists(repository)' }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async putRepo(record: GithubRepoRecord): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tables.repos, Item: record }));
  }

  /** The connection of a repository id. */
  async getRepoById(repositoryId: number): Promise<GithubRepoRecord | undefined> {
    return this.getRepoByKey(connectionKey(repositoryId));
  }

  /** A connection from before ids were recorded, keyed by its name. */
  async getLegacyRepo(fullName: string): Promise<GithubRepoRecord | undefined> {
    const record = await this.getRepoByKey(fullName.toLowerCase());
    return record && record.repositoryId === undefined ? record : undefined;
  }

  async getRepoByKey(key: string): Promise<GithubRepoRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tables.repos, Key: { repository: key }, ConsistentRead: true }));
    return out.Item as GithubRepoRecord | undefined;
  }

  /** The tenant's connection of `owner/name` (by its current name, any case), or a 404. */
  async getRepoForTenant(fullName: string, tenantId: string): Promise<GithubRepoRecord> {
    const wanted = fullName.toLowerCase();
    for await (const repo of eachOfTenant<GithubRepoRecord>(this.db, this.tables.repos, 'repository', tenantId)) {
      if (repo.fullName.toLowerCase() === wanted) return repo;
    }
    throw new NotFoundError(`Repository ${fullName.slice(0, 200)} is not connected.`);
  }

  /** Records the name GitHub now reports for a connected repository (a rename). */
  async renameRepo(key: string, fullName: string, now: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.tables.repos,
          Key: { repository: key },
          UpdateExpression: 'SET fullName = :name, updatedAt = :now',
          ConditionExpression: 'attribute_exists(repository)',
          ExpressionAttributeValues: { ':name': fullName, ':now': now },
        }),
      )
      .catch((err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      });
  }

  async deleteRepo(key: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tables.repos, Key: { repository: key } }));
  }

  async listRepos(tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ items: GithubRepoRecord[]; nextCursor?: string }> {
    return queryByTenant<GithubRepoRecord>(this.db, this.tables.repos, 'repository', tenantId, opts);
  }

  /** Records a delivery; false when it was recorded before (a redelivery). */
  async claimDelivery(deliveryId: string, event: string, now: number): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tables.deliveries,
          Item: { deliveryId, event, receivedAt: new Date(now).toISOString(), ttl: Math.floor(now / 1000) + DELIVERY_TTL_SECONDS },
          ConditionExpression: 'attribute_not_exists(deliveryId)',
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Forgets a delivery whose work could not be handed off, so GitHub's redelivery is not ignored. */
  async forgetDelivery(deliveryId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tables.deliveries, Key: { deliveryId } }));
  }

  async getDelivery(deliveryId: string): Promise<{ deliveryId: string; event: string } | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tables.deliveries, Key: { deliveryId }, ConsistentRead: true }));
    return out.Item as { deliveryId: string; event: string } | undefined;
  }

  /**
   * Binds a delivery to the run that works on it; the run bound before when there is one (the
   * same event delivered twice, or sent again by a redrive).
   */
  async bindDeliveryRun(deliveryId: string, runId: string, now: number): Promise<string | undefined> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tables.deliveries,
          Key: { deliveryId },
          UpdateExpression: 'SET runId = :run, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(runId)',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':run': runId, ':ttl': Math.floor(now / 1000) + DELIVERY_TTL_SECONDS },
        }),
      );
      return undefined;
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const out = await this.db.send(new GetCommand({ TableName: this.tables.deliveries, Key: { deliveryId }, ConsistentRead: true }));
      return (out.Item as { runId?: string } | undefined)?.runId;
    }
  }

  async getRun(runId: string): Promise<GithubRunRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tables.runs, Key: { runId }, ConsistentRead: true }));
    return out.Item as GithubRunRecord | undefined;
  }

  async putRun(record: GithubRunRecord): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tables.runs, Item: record }));
  }

  async listRuns(tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ items: GithubRunRecord[]; nextCursor?: string }> {
    return queryByTenant<GithubRunRecord>(this.db, this.tables.runs, 'runId', tenantId, opts);
  }

  /** Every run of a tenant, newest first (the statistics read them all). */
  eachRun(tenantId: string): AsyncGenerator<GithubRunRecord> {
    return eachOfTenant<GithubRunRecord>(this.db, this.tables.runs, 'runId', tenantId);
  }

  /**
   * The thread of an issue or PR, following a Stratus PR's alias to its issue's thread. A thread
   * from before repository ids were recorded is found by the repository's name; the caller
   * checks it belongs to the connection's tenant.
   */
  async getThread(repository: { id: number; fullName: string }, number: number): Promise<GithubThreadRecord | undefined> {
    const item = (await this.getThreadItem(threadKey(repository.id, number))) ?? (await this.getThreadItem(legacyThreadKey(repository.fullName, number)));
    if (!item?.aliasOf) return item;
    return this.getThreadItem(item.aliasOf);
  }

  /** The thread held under a key (a session's binding names it), following a Stratus PR's alias. */
  async getThreadByKey(key: string): Promise<GithubThreadRecord | undefined> {
    const item = await this.getThreadItem(key);
    return item?.aliasOf ? this.getThreadItem(item.aliasOf) : item;
  }

  private async getThreadItem(key: string): Promise<GithubThreadRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tables.threads, Key: { threadKey: key }, ConsistentRead: true }));
    return out.Item as GithubThreadRecord | undefined;
  }

  /**
   * Marks a thread as worked on by `runId` until `heldUntil` at the latest (creating it if new).
   * False when another run holds it; a hold past its `heldUntil` (a worker that died) is taken
   * over, as is one written without it (by an earlier release) once older than `legacyStaleMs`,
   * and one the same run holds (its worker died and the run is being carried out again).
   */
  async claimThread(key: string, runId: string, at: { now: number; heldUntil: number; legacyStaleMs: number }): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tables.threads,
          Key: { threadKey: key },
          UpdateExpression: 'SET activeRunId = :run, activeSince = :now, heldUntil = :until',
          ConditionExpression:
            'attribute_not_exists(activeRunId) OR activeRunId = :run OR heldUntil < :now OR (attribute_not_exists(heldUntil) AND activeSince < :stale)',
          ExpressionAttributeValues: { ':run': runId, ':now': at.now, ':until': at.heldUntil, ':stale': at.now - at.legacyStaleMs },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Saves what the run learnt about the thread and lets go of it. */
  async releaseThread(
    key: string,
    runId: string,
    patch: Omit<GithubThreadRecord, 'threadKey' | 'activeRunId' | 'activeSince' | 'heldUntil' | 'aliasOf'>,
  ): Promise<void> {
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
    const names = Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k]));
    const values = Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v]));
    const sets = entries.map((_, i) => `#f${i} = :v${i}`);
    await this.db.send(
      new UpdateCommand({
        TableName: this.tables.threads,
        Key: { threadKey: key },
        // The run's state is the whole thread: a question it does not leave waiting is gone.
        UpdateExpression: `${sets.length ? `SET ${sets.join(', ')} ` : ''}REMOVE activeRunId, activeSince, heldUntil${patch.waitingQuestion ? '' : ', waitingQuestion'}`,
        ConditionExpression: 'activeRunId = :run',
        ExpressionAttributeNames: entries.length ? names : undefined,
        ExpressionAttributeValues: { ...values, ':run': runId },
      }),
    );
  }

  /** Points a Stratus pull request's number at the thread of the issue it came from. */
  async linkPullRequest(repositoryId: number, number: number, target: string): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tables.threads, Item: { threadKey: threadKey(repositoryId, number), aliasOf: target } }));
  }
}
