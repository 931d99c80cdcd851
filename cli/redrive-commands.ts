import { adminClient } from './admin-commands.ts';
import { ok } from './client.ts';
import { CliError, EXIT } from './exit-codes.ts';

type Print = (human: string, json: unknown) => void;
type Failure = { id: string; functionName: string; failedAt: string; event?: unknown; error: { type: string; message: string } };

/** What the event was for, in a few words: its `kind` (continue_turn, purge_session, run_subagent, github_work). */
const eventKind = (event: unknown) => String((event as { kind?: unknown } | undefined)?.kind ?? '(no event)');
const failureLine = (f: Failure) =>
  `${f.id}  ${f.failedAt}  ${f.functionName.padEnd(24)} ${eventKind(f.event).padEnd(16)} ${f.error.type}: ${f.error.message.slice(0, 120)}`;

/**
 * `stratus admin failures ls|redrive`: the failed asynchronous invocations (turn continuations,
 * purges, sub-agent runs, GitHub work) through /v1/admin/async-failures, with the admin token.
 * `redrive ID` sends one again, `redrive --all` every one; a redrive that fails again is listed anew.
 */
export function adminFailureCommands(url: () => string, adminToken: string | undefined, print: Print) {
  const api = () => adminClient(url(), adminToken);
  return {
    async list() {
      const failures: Failure[] = [];
      let cursor: string | undefined;
      do {
        const page = ok(await api().GET('/v1/admin/async-failures', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
        failures.push(...page.failures);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      print(failures.map(failureLine).join('\n') || '(no failed invocations)', { failures });
    },
    async redrive(id: string | undefined, o: { all?: boolean }) {
      if (Boolean(o.all) === (id !== undefined)) throw new CliError('Give one failure id, or --all (not both).', EXIT.usage);
      if (id !== undefined) {
        const sent = ok(await api().POST('/v1/admin/async-failures/{id}/redrive', { params: { path: { id } } }));
        return print(`${sent.id} sent again to ${sent.functionName}`, sent);
      }
      const result = ok(await api().POST('/v1/admin/async-failures/redrive', {}));
      const lines = [
        `${result.redriven.length} sent again${result.more ? ' (more are left: run it again)' : ''}`,
        ...result.kept.map((k) => `kept ${k.id}: ${k.reason}`),
      ];
      print(lines.join('\n'), result);
    },
  };
}
