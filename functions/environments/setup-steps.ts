import { VIRTUAL_ROOT } from '../../sandbox-runner/common/virtual-paths.ts';
import type { BashResult } from '../../sandbox-runner/protocol.ts';
import type { Deps } from '../deps/deps.ts';
import { setupAllowList } from '../session-settings/setup-registries.ts';
import { SETUP_FILE, type SetupSettings } from '../session-settings/setup-settings.ts';
import { WorkspaceInputError } from '../runner-client/runner-errors.ts';
import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { SetupRecord } from '../stores/setup-record.ts';
import type { TurnEvent } from '../stores/turn-event.ts';
import { restoreCachedEnvironment, saveCachedEnvironment, type EnvironmentLayerDeps } from './environment-layer.ts';
import type { EnvironmentScope } from './environment-scope.ts';
import { setupNoteForModel } from './setup-report.ts';

/** The output tail a set-up record and its event keep (the session record is read by every turn). */
const OUTPUT_TAIL_CHARS = 8_000;
/** Time left for the model after a set-up that runs near the invocation's deadline. */
const DEADLINE_MARGIN_MS = 60_000;

export type SetupStepsDeps = Pick<Deps, 'sessions' | 'outbound' | 'clock' | 'tenantSettings'> &
  EnvironmentLayerDeps & {
    config: { egress: Deps['config']['egress']; setup: Deps['config']['setup'] };
  };

/** The turn that may run the set-up: its lease, its workspace, its event feed. */
export interface SetupTurn {
  session: SessionRecord;
  turnId: string;
  /** The lease owner: every set-up write is conditional on still holding the lease. */
  owner: string;
  workspace: WorkspaceSession;
  events: { push(event: TurnEvent): void };
  log: Logger;
  signal: AbortSignal;
  deadlineAt?: number;
}

/** What is to run: the commands as they run, the script they come from, and from where. */
interface SetupPlan {
  command: string;
  script: string;
  source: SetupRecord['source'];
  timeoutSeconds: number;
  allowedDomains: string[];
  /** The set-up file exists but could not be read: the set-up fails with this. */
  readError?: string;
}

/**
 * Runs the session's set-up steps before its first turn, once: the `setup.script` setting, or
 * else the workspace's `.stratus/setup.sh`, in the session's sandbox with the set-up allow-list
 * (registries plus the session's own list), under their own time limit. The outcome is stored
 * in the session (`setup`, claimed under the lease so no two turns run it), shown as
 * `setup_start` / `setup_end` events, and returned as a note that joins the first prompt.
 * A turn that finds a `running` record left by a dead turn marks it `interrupted` and says so.
 */
export async function runSetupSteps(deps: SetupStepsDeps, turn: SetupTurn): Promise<string | undefined> {
  const existing = turn.session.setup;
  if (existing?.status === 'running') return markInterrupted(deps, turn, existing);
  if (existing || turn.session.turnCount > 0) return undefined;
  const plan = await planSetup(deps, turn);
  if (!plan) return undefined;
  const started: SetupRecord = {
    status: 'running',
    source: plan.source,
    turnId: turn.turnId,
    startedAt: new Date(deps.clock()).toISOString(),
    timeoutSeconds: plan.timeoutSeconds,
    allowedDomains: plan.allowedDomains,
  };
  if (!(await deps.sessions.claimSetup(turn.session.sessionId, turn.owner, started))) return undefined;
  turn.events.push({
    type: 'setup_start',
    source: plan.source,
    command: plan.command,
    allowedDomains: plan.allowedDomains,
    timeoutSeconds: plan.timeoutSeconds,
  });
  const final = { ...(await runOrRestore(deps, turn, plan, started)), endedAt: new Date(deps.clock()).toISOString() };
  // What the set-up installed is not the agent's change: the session's diff starts after it.
  const workspace = turn.workspace.workspace;
  await deps.sessions.updateUnderLease(turn.session.sessionId, turn.owner, { setup: final, workspace, workspaceBase: workspace.version });
  turn.events.push({ ...endEvent(final), workspaceVersion: workspace.version });
  turn.log.info('set-up steps ended', { status: final.status, exitCode: final.exitCode, durationMs: final.durationMs });
  return setupNoteForModel(final);
}

/**
 * The cached environment when the layer has one for this set-up (the commands are then not
 * run), else the commands, whose success is offered to the layer. The layer failing costs only
 * the cache: it is logged, and the set-up runs (or its result stands) as without one.
 */
async function runOrRestore(deps: SetupStepsDeps, turn: SetupTurn, plan: SetupPlan, started: SetupRecord): Promise<SetupRecord> {
  if (plan.readError !== undefined) return { ...started, status: 'failed', error: plan.readError, durationMs: 0 };
  const scope = environmentScope(turn.session, plan);
  const restored = await restoreCachedEnvironment(deps, scope, turn.workspace).then(
    (r) => r.restored,
    (err: unknown) => (turn.log.warn('could not restore the cached environment', { error: errorMessage(err) }), false),
  );
  if (restored) return { ...started, status: 'succeeded', restored: true, durationMs: 0 };
  const ended = await execute(turn, plan, started, deps.clock);
  if (ended.status === 'succeeded') {
    await saveCachedEnvironment(deps, scope, turn.workspace).catch((err: unknown) =>
      turn.log.warn('could not save the cached environment', { error: errorMessage(err) }),
    );
  }
  return ended;
}

/** The setting's script, else the workspace's set-up file, else nothing (also when `enabled: false`). */
async function planSetup(deps: SetupStepsDeps, turn: SetupTurn): Promise<SetupPlan | undefined> {
  const own = turn.session.settings?.setup;
  // The tenant's default fills in what the session's (or its repository's) setting leaves out.
  const tenant = (await deps.tenantSettings.settingsOf(turn.session.tenantId)).setup;
  const settings = { ...tenant, ...own, script: own?.script };
  if (settings.enabled === false) return undefined;
  const timeoutSeconds = timeLimit(deps, settings.timeoutSeconds ?? deps.config.setup.timeoutSeconds, turn.deadlineAt);
  const allowedDomains = setupNetwork(deps, turn, settings.registries);
  if (settings.script) {
    // A GitHub run's session carries its repository's settings.
    const source = turn.session.source?.kind === 'github' ? 'repository_setting' : 'session_setting';
    return { command: settings.script, script: settings.script, source, timeoutSeconds, allowedDomains };
  }
  const tenantScript = tenant?.script && { command: tenant.script, script: tenant.script, source: 'tenant_setting' as const, timeoutSeconds, allowedDomains };
  // An empty workspace (version 0) has nothing to set up: no runner call.
  if (turn.workspace.version === 0) return undefined;
  const file = await readSetupFile(turn.workspace);
  if (file === undefined) return tenantScript || undefined;
  return {
    command: `bash ${SETUP_FILE}`,
    script: file.script,
    source: 'repository_file',
    timeoutSeconds,
    allowedDomains,
    ...(file.error ? { readError: file.error } : {}),
  };
}

/**
 * The hosts the set-up reaches: the registries tuned by the session's setting, then its own
 * allow-list. Without egress (the AWS default) there is no network to give: the session's own
 * list is then empty too (the API refuses one), and the set-up runs offline.
 */
function setupNetwork(deps: SetupStepsDeps, turn: SetupTurn, registries: SetupSettings['registries']): string[] {
  const settings = turn.session.settings;
  if (deps.config.egress === 'none') return [...(settings?.allowedDomains ?? [])];
  const wanted = setupAllowList(deps.config.setup.registries, registries, settings?.allowedDomains);
  // A non-public IP literal needs the operator's permission, as in a session's own list.
  const refused = new Set(wanted.filter((entry) => deps.outbound.allowedDomainsRefusals([entry]).length > 0));
  if (refused.size > 0) turn.log.warn('set-up registries refused by the outbound policy', { entries: [...refused] });
  return wanted.filter((entry) => !refused.has(entry));
}

/** The set-up's own limit, shortened when the invocation would end first (the model still needs time). */
function timeLimit(deps: SetupStepsDeps, seconds: number, deadlineAt: number | undefined): number {
  if (deadlineAt === undefined) return seconds;
  const left = Math.floor((deadlineAt - deps.clock() - DEADLINE_MARGIN_MS) / 1000);
  return Math.max(1, Math.min(seconds, left));
}

/**
 * The set-up file's text, undefined when the workspace has none, or why it cannot be read (a
 * directory, too large, the runner failing): a set-up that could not even be read is a failed
 * set-up the model and the user hear of, not a failed turn.
 */
async function readSetupFile(workspace: WorkspaceSession): Promise<{ script: string; error?: string } | undefined> {
  try {
    const read = await workspace.run({ type: 'read', path: `${VIRTUAL_ROOT}/${SETUP_FILE}` });
    return read.kind === 'text' ? { script: read.content } : { script: '', error: `${SETUP_FILE} is not a text file.` };
  } catch (err) {
    if (err instanceof WorkspaceInputError && /does not exist/.test(err.message)) return undefined;
    return { script: '', error: `${SETUP_FILE} could not be read: ${errorMessage(err).slice(0, 1_000)}` };
  }
}

/** Runs the commands at the workspace root; the session's cwd is left as it was. A runner refusal is the set-up's failure. */
async function execute(turn: SetupTurn, plan: SetupPlan, started: SetupRecord, clock: () => number): Promise<SetupRecord> {
  const cwd = turn.workspace.cwd;
  const stopKey = `${turn.turnId}_setup`.replace(/[^A-Za-z0-9_-]/g, '_').slice(-128);
  const canStop = turn.workspace.canStop;
  const begun = clock();
  turn.workspace.setCwd(VIRTUAL_ROOT);
  try {
    const result = await turn.workspace.run(
      { type: 'bash', command: plan.command, timeoutMs: plan.timeoutSeconds * 1000, background: 'never', ...(canStop ? { stopKey } : {}) },
      canStop ? { signal: turn.signal, key: stopKey } : undefined,
      { allowedDomains: plan.allowedDomains, phase: 'setup' },
    );
    return outcomeOf(started, result);
  } catch (err) {
    turn.log.warn('set-up steps could not run', { error: errorMessage(err) });
    return { ...started, status: 'failed', error: errorMessage(err).slice(0, 2_000), durationMs: clock() - begun };
  } finally {
    turn.workspace.setCwd(cwd);
  }
}

function outcomeOf(started: SetupRecord, result: BashResult): SetupRecord {
  const output = result.output;
  const cut = output.length > OUTPUT_TAIL_CHARS;
  const succeeded = result.exitCode === 0 && !result.timedOut && !result.interrupted;
  return {
    ...started,
    status: result.interrupted ? 'interrupted' : succeeded ? 'succeeded' : 'failed',
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    outputTail: cut ? output.slice(-OUTPUT_TAIL_CHARS) : output,
    ...(cut || result.outputTruncated ? { outputTruncated: true } : {}),
  };
}

/** A set-up a dead turn left `running`: it is not run again (it may have half-installed); the record and the model say so. */
async function markInterrupted(deps: SetupStepsDeps, turn: SetupTurn, left: SetupRecord): Promise<string> {
  const final: SetupRecord = {
    ...left,
    status: 'interrupted',
    endedAt: new Date(deps.clock()).toISOString(),
    error: `the turn ${left.turnId} that ran it stopped before it finished`,
  };
  await deps.sessions.updateUnderLease(turn.session.sessionId, turn.owner, { setup: final });
  turn.events.push(endEvent(final));
  turn.log.warn('set-up steps were interrupted by a dead turn; not run again', { turnId: left.turnId });
  return setupNoteForModel(final);
}

function endEvent(setup: SetupRecord): Extract<TurnEvent, { type: 'setup_end' }> {
  return {
    type: 'setup_end',
    status: setup.status,
    exitCode: setup.exitCode ?? null,
    timedOut: setup.timedOut === true,
    durationMs: setup.durationMs ?? 0,
    outputTail: setup.outputTail ?? '',
    ...(setup.error ? { error: setup.error } : {}),
  };
}

function environmentScope(session: SessionRecord, plan: SetupPlan): EnvironmentScope {
  const repository = session.source?.kind === 'github' ? repositoryOf(session.source.repository) : undefined;
  return {
    tenantId: session.tenantId,
    sessionId: session.sessionId,
    workspaceId: session.workspace.id,
    ...(repository ? { repository } : {}),
    setupScript: plan.script,
    setupSource: plan.source,
  };
}

function repositoryOf(fullName: string): EnvironmentScope['repository'] {
  const [owner, name] = fullName.split('/');
  return owner && name ? { owner, name } : undefined;
}
