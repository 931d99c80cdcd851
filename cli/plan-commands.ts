import { readFile } from 'node:fs/promises';
import { cliFetch } from './http.ts';
import { apiError, ok, type Api } from './client.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { exitFor, streamTurn, type TurnOptions } from './turn-commands.ts';

type Print = (human: string, value: unknown) => void;

/** The plans waiting for approval in a session (ExitPlanMode), each with its text. */
export async function showPlans(client: Api, sessionId: string, print: Print): Promise<void> {
  const { plans } = ok(await client.api.GET('/v1/sessions/{id}/plans', { params: { path: { id: sessionId } } }));
  const human = plans.length === 0 ? `No plan waits for approval in session ${sessionId}.` : plans.map((p) => `plan ${p.toolUseId}:\n${p.plan}`).join('\n\n');
  print(human, { plans });
}

/** The plan to decide: the one named, else the only one waiting. */
async function waitingPlanId(client: Api, sessionId: string, toolUseId: string | undefined): Promise<string> {
  if (toolUseId) return toolUseId;
  const { plans } = ok(await client.api.GET('/v1/sessions/{id}/plans', { params: { path: { id: sessionId } } }));
  if (plans.length === 0) throw new CliError(`No plan waits for approval in session ${sessionId}.`, EXIT.notFound);
  if (plans.length > 1) throw new CliError(`Several plans wait in session ${sessionId}: name one (${plans.map((p) => p.toolUseId).join(', ')}).`, EXIT.usage);
  return plans[0]!.toolUseId;
}

export interface PlanDecisionOptions {
  /** approve: the mode to continue in. */
  mode?: 'default' | 'acceptEdits';
  /** approve: a file holding the plan as edited. */
  planFile?: string;
  /** reject: what the agent should change. */
  feedback?: string;
}

async function decisionBody(decision: 'approve' | 'reject', o: PlanDecisionOptions): Promise<Record<string, unknown>> {
  if (decision === 'reject') return { decision, ...(o.feedback ? { feedback: o.feedback } : {}) };
  if (o.mode !== undefined && o.mode !== 'default' && o.mode !== 'acceptEdits') throw new CliError('--mode is default or acceptEdits.', EXIT.usage);
  const plan = o.planFile ? await readFile(o.planFile, 'utf8') : undefined;
  return { decision, ...(o.mode ? { mode: o.mode } : {}), ...(plan !== undefined ? { plan } : {}) };
}

/** Approves or rejects a waiting plan; when nothing else waits the turn resumes, and is streamed here. Returns the exit code. */
export async function decidePlanCommand(
  client: Api,
  sessionId: string,
  toolUseId: string | undefined,
  decision: 'approve' | 'reject',
  opts: TurnOptions & PlanDecisionOptions,
): Promise<number> {
  const id = await waitingPlanId(client, sessionId, toolUseId);
  const res = await cliFetch(`${client.url}/v1/sessions/${encodeURIComponent(sessionId)}/plans/${encodeURIComponent(id)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(await decisionBody(decision, opts)),
  });
  if (res.status === 202) {
    await res.body?.cancel();
    return EXIT.awaitingPermission;
  }
  if (!res.ok) throw apiError(res.status, await res.json().catch(() => undefined));
  return exitFor(await streamTurn(client, sessionId, res, opts));
}
