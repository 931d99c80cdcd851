import { ok, type Api } from './client.ts';

type Print = (human: string, json: unknown) => void;

export function scheduleCommands(client: () => Api, print: Print) {
  return {
    async list() {
      const page = ok(await client().api.GET('/v1/schedules', { params: { query: { limit: 200 } } }));
      print(
        page.schedules
          .map(
            (s) => `${s.id}  ${s.enabled ? 'on ' : 'off'}  ${s.cron} ${s.timezone}  next ${s.nextRunAt ?? '-'}  last ${s.lastRun?.outcome ?? '-'}  ${s.name}`,
          )
          .join('\n') || '(no schedules)',
        page,
      );
    },
    async add(opts: { name: string; cron: string; prompt: string; timezone?: string; session?: string }) {
      const created = ok(
        await client().api.POST('/v1/schedules', {
          body: {
            name: opts.name,
            cron: opts.cron,
            prompt: opts.prompt,
            ...(opts.timezone ? { timezone: opts.timezone } : {}),
            ...(opts.session ? { sessionId: opts.session } : {}),
          },
        }),
      );
      print(`${created.id}  next ${created.nextRunAt ?? '-'}`, created);
    },
    async remove(id: string) {
      ok(await client().api.DELETE('/v1/schedules/{id}', { params: { path: { id } } }));
      print(`deleted ${id}`, { deleted: id });
    },
    async run(id: string) {
      const result = ok(await client().api.POST('/v1/schedules/{id}/run', { params: { path: { id } } }));
      print(result.run ? `${result.run.outcome}${result.run.sessionId ? ` in ${result.run.sessionId}` : ''}` : 'did not run', result);
    },
  };
}
