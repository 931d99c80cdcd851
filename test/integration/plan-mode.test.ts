import { describe, expect, it } from 'vitest';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';

const PLAN = '1. Add `formatDate` to src/dates.ts\n2. Test it';
const use = (id: string, name: string, input: Record<string, unknown> = {}) => ({ type: 'tool_use' as const, id, name, input });
const results = (turn: { json: { events: any[] } }) =>
  turn.json.events.filter((e: any) => e.type === 'tool_result').map((r: any) => [r.toolUseId, r.isError, r.content]);
const approved = (sessionId: string, toolUseId: string, plan: string, edited = false) =>
  `User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\nYour plan has been saved to: GET /v1/sessions/${sessionId}/plans/${toolUseId}\nYou can refer back to it if needed during implementation.\n\n## ${edited ? 'Approved Plan (edited by user)' : 'Approved Plan'}:\n${plan}`;

/** EnterPlanMode and ExitPlanMode: plan mode from the model's side, and the plan's durable approval (docs/tools.md). */
describe('the plan-mode tools', () => {
  const fx = useLocalStack({ brain: unscripted });
  const createSession = async (settings: Record<string, unknown> = { permissionMode: 'default' }) => {
    const res = await fx.api.request('POST', '/v1/sessions', { settings });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };
  const modeOf = async (sessionId: string) => (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.permissions.mode;

  it('enters plan mode (writes are refused), pauses on the plan, refuses bad decisions, and resumes on the approval in the chosen mode', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession();
    stack.model!.enqueue(
      { content: [use('toolu_enter', 'EnterPlanMode')] },
      { content: [use('toolu_w', 'Write', { file_path: 'a.txt', content: 'x' })] },
      { content: [use('toolu_exit', 'ExitPlanMode', { plan: PLAN })] },
    );
    const first = await api.turn(sessionId, 'add dates');
    expect(first.json.stopReason).toBe('awaiting_permission');
    const [enter, write] = results(first);
    expect(enter).toEqual(['toolu_enter', false, expect.stringMatching(/^Entered plan mode\. You should now focus on exploring/)]);
    expect(enter![2]).toContain('Remember: DO NOT write or edit any files yet. This is a read-only exploration and planning phase.');
    expect(write).toEqual(['toolu_w', true, expect.stringContaining('plan mode')]);
    expect(first.json.events.find((e: any) => e.type === 'plan')).toEqual({ type: 'plan', toolUseId: 'toolu_exit', plan: PLAN });
    expect(await modeOf(sessionId)).toBe('plan');

    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session.status).toBe('awaiting_permission');
    expect(session.plans).toEqual([expect.objectContaining({ toolUseId: 'toolu_exit', turnId: first.json.turnId, plan: PLAN, status: 'waiting' })]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}/plans`)).json.plans).toEqual(session.plans);
    expect((await api.turn(sessionId, 'something else')).json.error.code).toBe('awaiting_permission');

    const path = `/v1/sessions/${sessionId}/plans/toolu_exit`;
    expect((await api.request('POST', path, { decision: 'approve', mode: 'bypassPermissions' })).status).toBe(400);
    expect((await api.request('POST', path, { decision: 'maybe' })).status).toBe(400);
    expect((await api.request('POST', `/v1/sessions/${sessionId}/plans/toolu_nope`, { decision: 'approve' })).status).toBe(404);
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_exit`, { decision: 'allow' })).status).toBe(404);

    stack.model!.enqueue({ content: [use('toolu_w2', 'Write', { file_path: 'a.txt', content: 'x' })] }, { content: [{ type: 'text', text: 'Done.' }] });
    const edited = `${PLAN}\n3. Document it`;
    const resumed = await api.request('POST', path, { decision: 'approve', plan: edited, mode: 'acceptEdits' });
    expect(resumed.status).toBe(200);
    expect(resumed.json.stopReason).toBe('end_turn');
    expect(results(resumed)).toEqual([
      ['toolu_exit', false, approved(sessionId, 'toolu_exit', edited, true)],
      // acceptEdits: the write runs without asking.
      ['toolu_w2', false, expect.any(String)],
    ]);
    const sent = stack.model!.requests.at(-2)!.body.messages;
    expect(withoutCacheControl(sent.at(-1)!.content)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_exit', content: approved(sessionId, 'toolu_exit', edited, true) },
    ]);
    expect(await modeOf(sessionId)).toBe('acceptEdits');

    const twice = await api.request('POST', path, { decision: 'reject' });
    expect([twice.status, twice.json.error.code]).toEqual([409, 'already_answered']);
    expect((await api.request('GET', path)).json).toMatchObject({ status: 'approved', plan: PLAN, approvedPlan: edited, mode: 'acceptEdits' });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.plans).toEqual([]);
  });

  it('keeps plan mode on a rejection and gives the model the feedback; approves the unedited plan with the reference text', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession({ permissionMode: 'plan' });
    stack.model!.enqueue({ content: [use('toolu_p1', 'ExitPlanMode', { plan: PLAN })] });
    expect((await api.turn(sessionId, 'plan it')).json.stopReason).toBe('awaiting_permission');
    stack.model!.enqueue({ content: [use('toolu_p2', 'ExitPlanMode', { plan: PLAN })] });
    const rejected = await api.request('POST', `/v1/sessions/${sessionId}/plans/toolu_p1`, { decision: 'reject', feedback: 'Use dayjs' });
    expect(rejected.json.stopReason).toBe('awaiting_permission');
    expect(results(rejected)).toEqual([
      [
        'toolu_p1',
        true,
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nUse dayjs",
      ],
    ]);
    expect(await modeOf(sessionId)).toBe('plan');
    expect((await api.request('GET', `/v1/sessions/${sessionId}/plans/toolu_p1`)).json).toMatchObject({ status: 'rejected', feedback: 'Use dayjs' });

    stack.model!.enqueue({ content: [{ type: 'text', text: 'Starting.' }] });
    const ok = await api.request('POST', `/v1/sessions/${sessionId}/plans/toolu_p2`, { decision: 'approve' });
    expect(results(ok)).toEqual([['toolu_p2', false, approved(sessionId, 'toolu_p2', PLAN)]]);
    expect(await modeOf(sessionId)).toBe('default');
  });

  it('gives the reference texts outside plan mode, for an empty plan, and where no one can approve', async () => {
    const { api, stack } = fx;
    const sessionId = await createSession();
    stack.model!.enqueue({ content: [use('toolu_out', 'ExitPlanMode', { plan: PLAN })] }, { content: [{ type: 'text', text: 'ok' }] });
    expect(results(await api.turn(sessionId, 'go'))).toEqual([
      [
        'toolu_out',
        true,
        '<tool_use_error>You are not in plan mode. This tool is only for exiting plan mode after writing a plan. If your plan was already approved, continue with implementation.</tool_use_error>',
      ],
    ]);

    const empty = await createSession({ permissionMode: 'plan' });
    stack.model!.enqueue({ content: [use('toolu_e', 'ExitPlanMode')] });
    expect((await api.turn(empty, 'go')).json.stopReason).toBe('awaiting_permission');
    expect((await api.request('GET', `/v1/sessions/${empty}/plans`)).json.plans).toEqual([expect.objectContaining({ plan: '' })]);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'ok' }] });
    const approvedEmpty = await api.request('POST', `/v1/sessions/${empty}/plans/toolu_e`, { decision: 'approve' });
    expect(results(approvedEmpty)).toEqual([['toolu_e', false, 'User has approved exiting plan mode. You can now proceed.']]);

    const unattended = await createSession({ permissionMode: 'plan', unattended: true });
    stack.model!.enqueue({ content: [use('toolu_u', 'ExitPlanMode', { plan: PLAN })] }, { content: [{ type: 'text', text: 'ok' }] });
    const turn = await api.turn(unattended, 'go');
    expect(turn.json.stopReason).toBe('end_turn');
    expect(results(turn)).toEqual([['toolu_u', true, expect.stringContaining('No one can approve a plan in this session')]]);
    expect(await modeOf(unattended)).toBe('plan');
  });
});
