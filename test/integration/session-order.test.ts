import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/stack-fixture.ts';

/** GET /v1/sessions by creation or by last activity, with pagination that stays correct while sessions change. */
describe('the order of the session list', () => {
  const fx = useLocalStack({});
  const ids = async (query: string) => {
    const res = await fx.api.request('GET', `/v1/sessions?${query}`);
    expect(res.status).toBe(200);
    return { ids: (res.json.sessions as { id: string }[]).map((s) => s.id), next: res.json.nextCursor as string | null };
  };

  it('lists by last activity with order=activity and by creation by default, each paging through its own cursor', async () => {
    const [a, b, c] = [await fx.api.createSession(), await fx.api.createSession(), await fx.api.createSession()];
    expect((await fx.api.turn(a, 'please run `echo active`')).json.stopReason).toBe('end_turn');
    expect((await ids('limit=10')).ids).toEqual([c, b, a]);
    expect((await ids('order=created&limit=10')).ids).toEqual([c, b, a]);
    expect((await ids('order=activity&limit=10')).ids).toEqual([a, c, b]);

    // Paging by activity: every session once, in order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { ids: string[]; next: string | null } = await ids(`order=activity&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.ids);
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual([a, c, b]);

    // A cursor continues only the order it came from; an unknown order names the field.
    const first = await ids('order=activity&limit=1');
    const crossed = await fx.api.request('GET', `/v1/sessions?order=created&cursor=${first.next}`);
    expect(crossed.status).toBe(400);
    expect(crossed.json.error.code).toBe('invalid_cursor');
    const sideways = await fx.api.request('GET', '/v1/sessions?order=sideways');
    expect(sideways.status).toBe(400);
    expect(sideways.json.error.message).toMatch(/order/);
  });

  it('never lists a session twice when it becomes active while someone pages: it moves to the front', async () => {
    const all = (await ids('order=activity&limit=200')).ids;
    const page1 = await ids('order=activity&limit=1');
    // The first session listed, and the last one not yet reached, change while the pager pauses.
    for (const id of [page1.ids[0]!, all.at(-1)!]) expect((await fx.api.request('PATCH', `/v1/sessions/${id}`, { title: `touched ${id}` })).status).toBe(200);
    const rest: string[] = [];
    let cursor: string | null = page1.next;
    while (cursor) {
      const page: { ids: string[]; next: string | null } = await ids(`order=activity&limit=1&cursor=${cursor}`);
      rest.push(...page.ids);
      cursor = page.next;
    }
    const listed = [...page1.ids, ...rest];
    expect(new Set(listed).size).toBe(listed.length);
    // What did not change is listed exactly once, in its order; the moved one leads a fresh listing.
    expect(rest).toEqual(all.slice(1, -1));
    expect((await ids('order=activity&limit=2')).ids).toEqual([all.at(-1), all[0]]);
  });
});
