import { createContextManager, type ContextManager } from '../context/context-manager.ts';
import { createPersistedResultReader } from '../context/persisted-output.ts';
import { loadSessionContext } from '../context/session-context.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from '../context/transcript.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { Tool, ToolUseContext } from '../tools/tool.ts';
import {
  agentControls,
  driveAgent,
  sessionMcpTools,
  sessionToolPool,
  type AgentControls,
  type AgentRun,
  type AgentScope,
  type RepositoryControls,
} from '../agent/agent-driver.ts';
import { loadRepositoryControls } from '../agent/repository-settings-load.ts';
import { prepareResume, type ResumeCalls } from './resume.ts';
import { questionTimeoutMs } from '../session-settings/session-settings.ts';
import { agentCallsToReenter, withReentries } from './subagent-reentry.ts';
import { queuedMessages } from './steer-messages.ts';
import { addUsage } from '../stores/budgets.ts';
import { BackgroundNotifier, unreportedBackgroundAgents } from '../agent/background-notifications.ts';
import { createSubagentRunner } from '../agent/subagent-runner.ts';
import { createSessionWeb } from '../agent/session-web.ts';
import { createSideModel } from '../agent/side-model.ts';
import { sessionModeSwitch } from '../agent/session-mode-switch.ts';
import { runSetupSteps } from '../environments/setup-steps.ts';
import { loadProjectContext, type ProjectContext } from '../agent/project-context.ts';
import type { TurnDeps } from '../agent/turn-deps.ts';
import type { TurnRecorder } from '../agent/turn-recorder.ts';
import type { TurnRun } from './turn-run.ts';
import type { TurnStop } from '../agent/turn-stop.ts';
import { createAgentMessenger } from '../agent/subagent-continue.ts';
import { getReadyForBash } from './ready-for-bash.ts';

/**
 * The start of a turn's loop: reload the conversation (only what follows the last compact
 * boundary, with the replacement decisions), take the answers of a resume, re-enter sub-agents
 * a dead turn left running (subagent-reentry.ts), repair other dangling
 * tool_uses, append the prompt, and drive the query loop on it into the session's log.
 */
export async function runTurnLoop(
  deps: TurnDeps,
  run: TurnRun,
  recorder: TurnRecorder,
  tools: { workspace: ToolUseContext['workspace']; signal: AbortSignal; stop: TurnStop },
): Promise<void> {
  const { session, log } = run;
  const loaded = await (run.preloaded ?? loadSessionContext(deps, session));
  const conversation = loaded.conversation;
  // The log, not the session's counter, is the truth: a crash between appending a message and
  // moving the counter leaves the counter one behind.
  recorder.writer.skipTo(loaded.lastSeq + 1);
  const external = await sessionMcpTools(deps, session.sessionId, recorder.settings, log);
  // Large MCP results are persisted like built-in ones: the context economy finds them by name too.
  const contextTools = external.length > 0 ? createToolRegistry([...deps.tools.tools, ...external]) : deps.tools;
  const context = createContextManager({ ...deps, tools: contextTools }, { session, owner: run.owner, append: recorder.append, loaded, log });
  let resume: ResumeCalls | undefined;
  if (run.opts.resume) {
    const prepared = await prepareResume(deps.approvals, session.sessionId, conversation, recorder.settings);
    resume = prepared.resume;
    if (prepared.settings !== recorder.settings) await recorder.saveSettings(prepared.settings);
  }
  const waiting = new Set(resume?.blocks.map((b) => b.id) ?? []);
  const open = danglingToolUses(conversation).filter((id) => !waiting.has(id));
  const reentries = agentCallsToReenter(conversation, open);
  const dangling = open.filter((id) => !reentries.some((call) => call.id === id));
  if (reentries.length > 0) log.warn('re-entering sub-agents a dead turn left running', { toolUseIds: reentries.map((c) => c.id) });
  resume = withReentries(resume, reentries);
  if (dangling.length > 0) {
    log.warn('repairing dangling tool_use blocks', { toolUseIds: dangling });
    conversation.push(await recorder.append('synthetic', 'user', syntheticResults(dangling)));
  }
  const notifier = await reportBackgroundAgents(deps, run, recorder, conversation);
  // From the workspace version this turn starts on, before the model sees anything (and before
  // set-up steps install anything: the git snapshot shows the checkout as it came). The
  // repository's settings come first: their env reaches the set-up's commands too.
  const repository = await repositorySettings(run, tools.workspace);
  const project = await loadProjectContext(deps, session, tools.workspace, run.startedAt);
  if (run.opts.prompt !== undefined) {
    // Only a turn with a prompt runs them: their note follows it in the same message (the
    // prompt stays the message's first block, which names an untitled session).
    const setupNote = run.continuation ? undefined : await runSetupSteps(deps, { ...run, workspace: tools.workspace, signal: tools.signal });
    const note = setupNote === undefined ? [] : [{ type: 'text' as const, text: setupNote }];
    conversation.push(await recorder.append('prompt', 'user', [{ type: 'text', text: run.opts.prompt }, ...note]));
  }
  const queued = queuedMessages(deps, session, run.turnId, (text) => logHolds(conversation, text));
  const scope: AgentScope = { kind: 'turn', log: recorder.agentLog(), resume, takeNotifications: () => takeNotifications(notifier, recorder, queued) };
  await driveTurn(deps, scope, turnRun(deps, run, recorder, { conversation, context, external, notifier, project, repository, ...tools }), log);
}

/** Drives the turn's run; beside its first model request, whose answer is often a Bash call, the runner and the shell grammar get ready for it. */
async function driveTurn(deps: TurnDeps, scope: AgentScope, agentRun: AgentRun, log: TurnRun['log']): Promise<void> {
  const ready = getReadyForBash(agentRun.registry, agentRun.toolContext.workspace, log);
  try {
    await driveAgent(deps, scope, agentRun);
  } finally {
    await ready;
  }
}

/** The repository's `.claude/settings.json` at the version this run starts on; what was refused or unreadable is told to the client. */
async function repositorySettings(run: TurnRun, workspace: ToolUseContext['workspace']): Promise<RepositoryControls> {
  const { controls, notes } = await loadRepositoryControls(workspace, run.log);
  for (const message of notes) run.events.push({ type: 'notice', source: '.claude/settings.json', message });
  return controls;
}

/**
 * Background sub-agents that finished since the log last heard of them: their notifications go
 * in before the prompt (their spend joins the session's usage with them); those that should be
 * running but are not get their invocation again. The notifier then watches during the turn.
 */
async function reportBackgroundAgents(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder, conversation: StoredMessage[]): Promise<BackgroundNotifier> {
  const notifier = new BackgroundNotifier(deps, run.session.sessionId, unreportedBackgroundAgents(run.session.sessionId, conversation), run.log);
  const notes = await notifier.take({ restartStalled: true });
  for (const text of notes.texts) conversation.push(await recorder.append('synthetic', 'user', [{ type: 'text', text }]));
  addUsage(recorder.usage, notes.usage);
  await notes.delivered();
  return notifier;
}

/**
 * Mid-turn notifications: their spend joins the session's usage once they are recorded. Then the
 * comments queued for a GitHub run's item meanwhile (the "steer" between model calls: docs/turns.md).
 */
async function takeNotifications(
  notifier: BackgroundNotifier,
  recorder: TurnRecorder,
  queued: ReturnType<typeof queuedMessages>,
): Promise<{ texts: string[]; delivered: () => Promise<void> }> {
  const notes = await notifier.take({ restartStalled: false });
  const steers = await queued();
  return {
    texts: [...notes.texts, ...steers.texts],
    delivered: async () => {
      addUsage(recorder.usage, notes.usage);
      await notes.delivered();
      await steers.delivered();
    },
  };
}

/** Whether a user message of the log loaded for this turn holds `text` as one of its text blocks. */
function logHolds(conversation: StoredMessage[], text: string): boolean {
  return conversation.some((m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && b.text === text));
}

/** What the start of the loop gathered for the turn's run. */
interface TurnLoopParts {
  conversation: StoredMessage[];
  context: ContextManager;
  external: Tool[];
  notifier: BackgroundNotifier;
  project: ProjectContext;
  repository: RepositoryControls;
  workspace: ToolUseContext['workspace'];
  signal: AbortSignal;
  stop: TurnStop;
}

/** What the turn's tool calls see: its workspace, its sub-agents, the session's list, schedules, web and model account. */
function turnToolContext(
  deps: TurnDeps,
  run: TurnRun,
  recorder: TurnRecorder,
  loop: TurnLoopParts,
  parts: { subagents: ToolUseContext['subagents']; permissions: AgentControls['permissions'] },
): ToolUseContext {
  const { session, turnId, log } = run;
  const { subagents } = parts;
  return {
    sessionId: session.sessionId,
    turnId,
    workspace: loop.workspace,
    signal: loop.signal,
    log,
    persistedResults: createPersistedResultReader(deps.blobs, session.sessionId),
    subagents,
    todos: { write: (todos) => recorder.saveTodos(todos) },
    interactionTimeoutMs: questionTimeoutMs(recorder.settings, parts.permissions.mode),
    permissionMode: sessionModeSwitch(parts.permissions, recorder),
    web: createSessionWeb(deps, recorder.settings),
    sideModel: createSideModel(deps, (response) => recorder.countToolModelCall(response)),
    skills: loop.project.skills,
    ...(deps.agentSchedules ? { schedules: deps.agentSchedules(session) } : {}),
    agentMessages: createAgentMessenger({ deps, session, turnId, onBackgroundLaunch: (id) => loop.notifier.add(id) }),
  };
}

/** The turn's run: the session's pool and controls, its Agent tool's sub-agents on its budget, permissions and hooks. */
function turnRun(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder, loop: TurnLoopParts): AgentRun {
  const { session, turnId, log, deadlineAt } = run;
  const controls = agentControls(deps, recorder.settings, run.opts.settings, loop.repository);
  const { registry, agents } = sessionToolPool(deps, recorder.settings, loop.external, controls.permissions);
  const beforeModelCall = () => loop.stop.beforeModelCall();
  const leaseHeld = () => recorder.leaseHeld();
  const subagents = createSubagentRunner(
    {
      deps,
      session,
      turnId,
      owner: run.owner,
      log,
      recorder,
      beforeModelCall,
      controls,
      onBackgroundLaunch: (id) => loop.notifier.add(id),
      leaseHeld,
      project: loop.project,
    },
    { pool: registry, agents, isForkChild: false },
  );
  return {
    system: loop.project.system,
    userContext: loop.project.userContext,
    messages: toApiMessages(loop.conversation),
    registry,
    controls,
    beforeModelCall,
    signal: loop.signal,
    context: loop.context,
    leaseHeld,
    logDurable: () => recorder.durable(),
    toolContext: turnToolContext(deps, run, recorder, loop, { subagents, permissions: controls.permissions }),
    ...(deadlineAt === undefined ? {} : { shouldCheckpoint: () => deadlineAt - deps.clock() <= deps.config.turn.checkpointMarginMs }),
  };
}
