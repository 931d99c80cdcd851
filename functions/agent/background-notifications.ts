import type { StoredMessage } from '../stores/message-store.ts';
import { AGENT_TOOL_NAMES, agentIdFor, agentLogId } from '../stores/agent-log.ts';
import type { BackgroundAgentRecord } from '../stores/background-agent-store.ts';
import type { UsageRecord } from '../stores/budgets.ts';
import { leaseIsDead } from '../stores/session-store.ts';
import type { Logger } from '../shared/logger.ts';
import { errorMessage } from '../shared/errors.ts';
import { addUsage } from '../stores/budgets.ts';
import { SEND_MESSAGE_TOOL_NAME } from '../tools/agent/send-message-tool.ts';
import type { TurnDeps } from './turn-deps.ts';

/**
 * The notification of a finished background agent (a `<task-notification>` sent to the model
 * as a user message: docs/tool-pipeline.md, "Sub-agents"), without `<output-file>`: a
 * Stratus sub-agent has no output file, its log is read through the API.
 */
export function taskNotificationText(record: BackgroundAgentRecord): string {
  const result = record.result;
  const status = record.status === 'completed' ? 'completed' : 'failed';
  const summary =
    status === 'completed' ? `Agent "${record.description}" completed` : `Agent "${record.description}" failed: ${result?.error || 'Unknown error'}`;
  const final = (result?.content ?? []).map((b) => b.text).join('\n');
  const resultPart = final ? `\n<result>${final}</result>` : '';
  const usage = result
    ? `\n<usage><total_tokens>${result.totalTokens}</total_tokens><tool_uses>${record.toolUses}</tool_uses><duration_ms>${result.durationMs}</duration_ms></usage>`
    : '';
  return `<task-notification>\n<task-id>${record.agentId}</task-id>\n<tool-use-id>${record.toolUseId}</tool-use-id>\n<status>${status}</status>\n<summary>${summary}</summary>${resultPart}${usage}\n</task-notification>`;
}

/**
 * Background agents launched in this part of the log whose notification it does not hold yet
 * (their log ids). The log is the record of what was delivered; the agent's `notified` flag
 * covers a notification that a compaction has since summarised away. A SendMessage call
 * continues an agent (it runs again and will be reported again), so it counts from there as a
 * launch; a call that continued nothing finds no running record and drops out.
 */
export function unreportedBackgroundAgents(sessionId: string, log: readonly Pick<StoredMessage, 'role' | 'content'>[]): string[] {
  const outstanding = new Set<string>();
  for (const message of log) {
    for (const block of message.content) {
      const launched = block.type === 'tool_use' ? launchedAgentId(block.name, block.id, block.input) : undefined;
      if (launched) {
        outstanding.delete(launched);
        outstanding.add(launched);
      } else if (block.type === 'text' && message.role === 'user' && block.text.startsWith('<task-notification>')) {
        const id = /<task-id>([^<]+)<\/task-id>/.exec(block.text)?.[1];
        if (id) outstanding.delete(id);
      }
    }
  }
  return [...outstanding].map((id) => agentLogId(sessionId, id));
}

/** The agent a call starts or continues in the background: an Agent call with `run_in_background`, or a SendMessage call. */
function launchedAgentId(name: string, toolUseId: string, input: unknown): string | undefined {
  const fields = (input ?? {}) as { run_in_background?: unknown; to?: unknown };
  if (AGENT_TOOL_NAMES.has(name)) return fields.run_in_background === true ? agentIdFor(toolUseId) : undefined;
  return name === SEND_MESSAGE_TOOL_NAME && typeof fields.to === 'string' && /^agent_[\w-]+$/.test(fields.to) ? fields.to : undefined;
}

export interface Notifications {
  texts: string[];
  /** The finished agents' spend, which the session's usage takes with their notification. */
  usage: UsageRecord;
  /** Marks them notified; call once the texts are in the parent's log. */
  delivered(): Promise<void>;
}

/**
 * One turn's view of its session's background agents: which have finished and not been
 * reported (their notifications, for the turn to add to its log), and, at a turn's start, which
 * should be running but are not (no live lease: the process running them died, or their
 * invocation never came) and get their invocation again. The agent's lease makes a duplicate
 * invocation harmless.
 */
export class BackgroundNotifier {
  private readonly pending: Set<string>;

  constructor(
    private readonly deps: Pick<TurnDeps, 'backgroundAgents' | 'continuations' | 'clock'>,
    private readonly sessionId: string,
    pending: readonly string[],
    private readonly log: Logger,
  ) {
    this.pending = new Set(pending);
  }

  /** A background agent launched by this turn. */
  add(agentLogId: string): void {
    this.pending.add(agentLogId);
  }

  async take(opts: { restartStalled: boolean }): Promise<Notifications> {
    const finished: BackgroundAgentRecord[] = [];
    for (const id of [...this.pending]) {
      const record = await this.deps.backgroundAgents.get(id);
      if (!record || record.notified) {
        this.pending.delete(id);
        continue;
      }
      if (record.status !== 'running') finished.push(record);
      else if (opts.restartStalled && (!record.lease || leaseIsDead(record.lease, this.deps.clock()))) await this.restart(record);
    }
    const usage: UsageRecord = { inputTokens: 0, outputTokens: 0 };
    for (const record of finished) addUsage(usage, record.usage);
    return {
      texts: finished.map(taskNotificationText),
      usage,
      delivered: async () => {
        for (const record of finished) {
          await this.deps.backgroundAgents.markNotified(record.sessionId);
          this.pending.delete(record.sessionId);
        }
      },
    };
  }

  private async restart(record: BackgroundAgentRecord): Promise<void> {
    this.log.warn('background sub-agent is not running (its process died, or its invocation never came); asking for it again', {
      agentId: record.agentId,
      heartbeatAt: record.lease?.heartbeatAt,
    });
    try {
      await this.deps.continuations.schedule({ kind: 'run_subagent', sessionId: this.sessionId, agentLogId: record.sessionId });
    } catch (err) {
      this.log.error('could not ask for a background sub-agent again; the next turn tries again', { agentId: record.agentId, error: errorMessage(err) });
    }
  }
}
