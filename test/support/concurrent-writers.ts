import type { apiClient } from './api-client.ts';

type Api = ReturnType<typeof apiClient>;

/** What one round of concurrent writing turns did, as a client of the HTTP API sees it. */
export interface WriteRoundReport {
  turns: number;
  /** Turns that did not answer 200 with `end_turn`. */
  failedTurns: string[];
  /** Error tool_results: runner failures, conflicts, anything else. */
  errorResults: string[];
  /** Acknowledged appends missing from the file read back afterwards (`session: line`). */
  lostWrites: string[];
  /** Sessions whose last turn of the round could not write. */
  wedged: string[];
}

export interface WriterSession {
  id: string;
  /** Lines the session's file must hold: the seed and every acknowledged append. */
  expected: string[];
}

/**
 * Many sessions writing at once through the whole stack (run with the demo brain, which runs a
 * prompt's `backticked command` with Bash): each session's turns run one after another, all
 * sessions in parallel, and every turn appends a unique line to `log.txt`. Afterwards each file
 * is read back through the workspace files API and checked line by line.
 */
export async function createWriterSessions(api: Api, count: number): Promise<WriterSession[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const seed = `seed ${i}`;
      return { id: await api.createSession({ 'log.txt': `${seed}\n` }), expected: [seed] };
    }),
  );
}

export async function runWriteRound(api: Api, sessions: WriterSession[], opts: { turns: number; round: number }): Promise<WriteRoundReport> {
  const report: WriteRoundReport = { turns: 0, failedTurns: [], errorResults: [], lostWrites: [], wedged: [] };
  await Promise.all(
    sessions.map(async (session, s) => {
      let lastWrote = false;
      for (let t = 0; t < opts.turns; t++) {
        const line = `r${opts.round} s${s} t${t}`;
        const res = await api.turn(session.id, `Append a line: \`echo '${line}' >> log.txt\``);
        report.turns += 1;
        lastWrote = false;
        if (res.status !== 200 || res.json?.stopReason !== 'end_turn') {
          report.failedTurns.push(`${session.id}: ${res.status} ${res.text.slice(0, 300)}`);
          continue;
        }
        const results = (res.json.events as { type: string; isError?: boolean; content?: unknown }[]).filter((e) => e.type === 'tool_result');
        const errors = results.filter((r) => r.isError);
        for (const e of errors) report.errorResults.push(`${session.id}: ${text(e.content).slice(0, 300)}`);
        if (results.length === 1 && errors.length === 0) {
          session.expected.push(line);
          lastWrote = true;
        }
      }
      if (!lastWrote) report.wedged.push(session.id);
    }),
  );
  await Promise.all(
    sessions.map(async (session) => {
      const file = await api.request('GET', `/v1/sessions/${session.id}/workspace/files/log.txt`);
      const present = new Set(file.status === 200 ? file.text.split('\n') : []);
      for (const line of session.expected) if (!present.has(line)) report.lostWrites.push(`${session.id}: ${line}`);
    }),
  );
  return report;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('');
  return JSON.stringify(content);
}
