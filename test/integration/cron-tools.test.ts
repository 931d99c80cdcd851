import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

const call = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });
const say = (text: string) => ({ content: [{ type: 'text' as const, text }] });

/** The results of a session's tool calls, by tool_use id: [text, isError]. */
async function results(api: ReturnType<typeof apiClient>, sessionId: string): Promise<Map<string, [string, boolean]>> {
  const out = new Map<string, [string, boolean]>();
  for (const m of await api.messages(sessionId))
    for (const b of m.content)
      if (b.type === 'tool_result')
        out.set(b.tool_use_id, [typeof b.content === 'string' ? b.content : b.content.map((c: { text: string }) => c.text).join(''), b.is_error === true]);
  return out;
}

/** CronCreate / CronList / CronDelete through the turn engine: agent-made Stratus schedules of the session (docs/tools.md, "Cron tools"). */
describe('the Cron tools', () => {
  const fx = useLocalStack({ apiTokens: { a: 'tenant-a', b: 'tenant-b' }, schedulerTickMs: 3_600_000 });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    api = apiClient(stack.apiUrl, 'a');
  });

  it('makes schedules of the session, marked as agent-made, that it alone lists and deletes', async () => {
    const sessionId = await api.createSession();
    const other = await api.createSession();
    const byApi = (await api.request('POST', '/v1/schedules', { name: 'by hand', cron: '0 3 * * *', prompt: 'p', sessionId })).json.id as string;
    stack.model!.enqueue(
      { content: [call('toolu_c1', 'CronCreate', { cron: '*/30 * * * *', prompt: 'check the build again' })] },
      { content: [call('toolu_c2', 'CronCreate', { cron: '0 9 * * 1-5', prompt: 'morning summary', recurring: false })] },
      { content: [call('toolu_bad1', 'CronCreate', { cron: '0 9 * *', prompt: 'x' })] },
      { content: [call('toolu_bad2', 'CronCreate', { cron: '0 9 30 2 *', prompt: 'x' })] },
      { content: [call('toolu_bad3', 'CronCreate', { cron: '0 9 1 * 1', prompt: 'x' })] },
      { content: [call('toolu_l1', 'CronList', {})] },
      say('scheduled'),
    );
    expect((await api.turn(sessionId, 'schedule follow-ups')).status).toBe(200);
    const r = await results(api, sessionId);
    const recurring =
      /^Scheduled recurring job (sch_\S+) \(Every 30 minutes\)\. Stored as a Stratus schedule of this session \(listed by GET \/v1\/schedules\)\. Auto-expires after 7 days\. Use CronDelete to cancel sooner\.$/.exec(
        r.get('toolu_c1')![0],
      );
    expect(recurring).not.toBeNull();
    const oneShot = /^Scheduled one-shot task (sch_\S+) \(Weekdays at 9:00 AM\)\. .*It will fire once then auto-delete\.$/.exec(r.get('toolu_c2')![0]);
    expect(oneShot).not.toBeNull();
    expect(r.get('toolu_bad1')).toEqual(["<tool_use_error>Invalid cron expression '0 9 * *'. Expected 5 fields: M H DoM Mon DoW.</tool_use_error>", true]);
    expect(r.get('toolu_bad2')).toEqual([
      "<tool_use_error>Cron expression '0 9 30 2 *' does not match any calendar date in the next year.</tool_use_error>",
      true,
    ]);
    expect(r.get('toolu_bad3')![0]).toContain('give either a day of the month or a day of the week, not both');
    const [idRecurring, idOnce] = [recurring![1]!, oneShot![1]!];
    expect(r.get('toolu_l1')).toEqual([
      `${idRecurring} — Every 30 minutes (recurring): check the build again\n${idOnce} — Weekdays at 9:00 AM (one-shot): morning summary`,
      false,
    ]);

    const listed = (await api.request('GET', '/v1/schedules?limit=200')).json.schedules as { id: string }[];
    const made = listed.find((s) => s.id === idRecurring);
    expect(made).toMatchObject({
      target: { sessionId },
      timezone: 'UTC',
      recurring: true,
      createdBy: { kind: 'agent', sessionId, toolUseId: 'toolu_c1' },
    });
    expect(listed.find((s) => s.id === idOnce)).toMatchObject({ recurring: false, expiresAt: null });
    expect(listed.find((s) => s.id === byApi)).toMatchObject({ createdBy: null });
    expect((await apiClient(stack.apiUrl, 'b').request('GET', `/v1/schedules/${idRecurring}`)).status).toBe(404);

    // Another session sees none of them and can delete none; this session cannot delete the one made through the API.
    stack.model!.enqueue({ content: [call('toolu_l2', 'CronList', {})] }, { content: [call('toolu_d0', 'CronDelete', { id: idRecurring })] }, say('nothing'));
    await api.turn(other, 'look');
    const o = await results(api, other);
    expect(o.get('toolu_l2')).toEqual(['No scheduled jobs.', false]);
    expect(o.get('toolu_d0')).toEqual([`<tool_use_error>No scheduled job with id '${idRecurring}'</tool_use_error>`, true]);
    stack.model!.enqueue(
      { content: [call('toolu_d1', 'CronDelete', { id: byApi })] },
      { content: [call('toolu_d2', 'CronDelete', { id: idRecurring })] },
      say('cancelled'),
    );
    await api.turn(sessionId, 'cancel');
    const d = await results(api, sessionId);
    expect(d.get('toolu_d1')).toEqual([`<tool_use_error>No scheduled job with id '${byApi}'</tool_use_error>`, true]);
    expect(d.get('toolu_d2')).toEqual([`Cancelled job ${idRecurring}.`, false]);
    expect((await api.request('GET', `/v1/schedules/${idRecurring}`)).status).toBe(404);
    expect((await api.request('GET', `/v1/schedules/${byApi}`)).status).toBe(200);
  });

  it('fires a one-shot schedule through the scheduler: the session runs its prompt, then the schedule is gone', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [call('toolu_once', 'CronCreate', { cron: '15 * * * *', prompt: 'follow up now', recurring: false })] }, say('set'));
    await api.turn(sessionId, 'remind me');
    const id = /(sch_\S+)/.exec((await results(api, sessionId)).get('toolu_once')![0])![1]!;
    const record = (await stack.deps.schedules.get(id))!;
    expect(record).toMatchObject({ oneShot: true, target: { sessionId } });
    await stack.deps.schedules.put({ ...record, nextRunAt: Date.now() - 1 });
    stack.model!.enqueue(say('followed up'));
    await stack.scheduler.tick();
    const prompts = (await api.messages(sessionId)).filter((m) => m.kind === 'prompt').map((m) => m.content[0].text);
    expect(prompts).toEqual(['remind me', 'follow up now']);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.turnCount).toBe(2);
    expect(await stack.deps.schedules.get(id)).toBeUndefined();
  });

  it('an aged-out recurring schedule fires once more, then is deleted; a fresh one stays', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [call('toolu_rec', 'CronCreate', { cron: '0 * * * *', prompt: 'hourly check' })] }, say('set'));
    await api.turn(sessionId, 'check hourly');
    const id = /(sch_\S+)/.exec((await results(api, sessionId)).get('toolu_rec')![0])![1]!;
    const record = (await stack.deps.schedules.get(id))!;
    expect(record.expiresAt! - Date.parse(record.createdAt)).toBe(7 * 24 * 3600_000);
    await stack.deps.schedules.put({ ...record, nextRunAt: Date.now() - 1 });
    stack.model!.enqueue(say('checked'));
    await stack.scheduler.tick();
    expect((await stack.deps.schedules.get(id))?.lastRun).toMatchObject({ outcome: 'end_turn' });
    await stack.deps.schedules.put({ ...(await stack.deps.schedules.get(id))!, nextRunAt: Date.now() - 1, expiresAt: Date.now() - 1 });
    stack.model!.enqueue(say('checked for the last time'));
    await stack.scheduler.tick();
    expect(await stack.deps.schedules.get(id)).toBeUndefined();
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.turnCount).toBe(3);
  });

  it('asks before CronCreate in default mode (an unattended session is refused), lists and deletes without asking; a deny rule hides the tools', async () => {
    const created = await api.request('POST', '/v1/sessions', { settings: { permissionMode: 'default', unattended: true } });
    const sessionId = created.json.id as string;
    stack.model!.enqueue(
      { content: [call('toolu_ask', 'CronCreate', { cron: '0 * * * *', prompt: 'p' }), call('toolu_list', 'CronList', {})] },
      say('could not'),
    );
    await api.turn(sessionId, 'schedule');
    const r = await results(api, sessionId);
    expect(r.get('toolu_ask')![0]).toMatch(/^Permission to use CronCreate has been denied because Claude Code is running in don't ask mode\./);
    expect(r.get('toolu_list')).toEqual(['No scheduled jobs.', false]);
    expect(
      (await api.request('GET', '/v1/schedules?limit=200')).json.schedules.some((s: { target: { sessionId?: string } }) => s.target.sessionId === sessionId),
    ).toBe(false);

    const denied = (await api.request('POST', '/v1/sessions', { settings: { rules: { deny: ['CronCreate', 'CronDelete'] } } })).json.id as string;
    stack.model!.enqueue(say('nothing to do'));
    await api.turn(denied, 'hello');
    const tools = stack.model!.requests.at(-1)!.body.tools!.map((t) => t.name);
    expect(tools).toContain('CronList');
    expect(tools).not.toContain('CronCreate');
    expect(tools).not.toContain('CronDelete');
  });
});
