import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/**
 * The puts of a response and its tool results ride beside the next model request
 * (docs/turns.md, "Durable behind the request"). These tests open that window for real: the
 * DynamoDB stand-in (a child process of the stack) is stopped with SIGSTOP once the first
 * request is in, so the puts that follow cannot land; the next request still goes out, and the
 * stack is then killed with SIGKILL inside the window, its puts never stored.
 */
describe('a process killed while its last items are stored behind the next model request', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.kill();
    running = undefined;
    tmp.cleanup();
  });
  const env = { STRATUS_HEARTBEAT_MS: '1000' };

  it('sent the request before the items were stored, never acted on its answer, and the next turn goes on from the log', { timeout: 180_000 }, async () => {
    running = await startStackProcess(tmp.dir, env);
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession({ 'a.txt': 'alpha\n' });
    await running.script([
      // Slow enough to stop the store while it streams; its call has bad input, so its result needs no store.
      {
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_bad', name: 'Read', input: {} },
        ],
        delayMs: 150,
      },
      // The answer to the request sent inside the window: a call with an effect, which must never run.
      { content: [{ type: 'tool_use', id: 'toolu_effect', name: 'Write', input: { file_path: '/workspace/effect.txt', content: 'applied\n' } }] },
      { content: [{ type: 'text', text: 'Wrote it.' }] },
    ]);
    const turn = fetch(`${running.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'check a file' }),
    }).catch(() => undefined);

    await waitForMainRequests(running, 1);
    const store = standInPid(running.child.pid!, 'dynamo-process');
    process.kill(store, 'SIGSTOP');
    // The response's and its result's puts hang on the stopped store; the next request goes out anyway.
    const requests = await waitForMainRequests(running, 2);
    const carried = requests[1]!.messages.at(-1)!.content as { type: string; tool_use_id?: string; is_error?: boolean }[];
    expect(carried[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_bad', is_error: true });

    // Killed inside the window: the stack and its stopped store die with the puts not stored.
    await running.kill();
    await turn;

    running = await startStackProcess(tmp.dir, env);
    api = apiClient(running.apiUrl, running.token);
    // The log is the prefix stored before the window: the prompt. Nothing of the answer was recorded or run.
    expect((await api.messages(sessionId)).map((m) => m.kind)).toEqual(['prompt']);
    const effect = await api.request('GET', `/v1/sessions/${sessionId}/workspace/files/effect.txt`);
    expect({ status: effect.status, body: effect.json }).toEqual({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'No file "effect.txt" in the workspace.' } },
    });

    await running.script([{ content: [{ type: 'text', text: 'Recovered.' }] }]);
    const next = await turnOnceFree(api, sessionId, 'carry on');
    expect(next.json).toMatchObject({ stopReason: 'end_turn', error: null });
    expect((await api.messages(sessionId)).map((m) => m.kind)).toEqual(['prompt', 'prompt', 'assistant']);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 2 });
  });
});

type ModelRequest = { tools?: unknown[]; messages: { role: string; content: unknown }[] };

/** The main loop's requests (those that carry the tools), once there are at least `n`. */
async function waitForMainRequests(stack: StackProcess, n: number): Promise<ModelRequest[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const main = (await stack.modelRequests<ModelRequest>()).filter((r) => (r.tools?.length ?? 0) > 0);
    if (main.length >= n) return main;
    if (Date.now() > deadline) throw new Error(`only ${main.length} of ${n} model requests arrived`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pid of the stack's stand-in whose command line names `entry` (a descendant of `root`). */
function standInPid(root: number, entry: string): number {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  for (const pid of parentOf.keys()) {
    if (!descends(pid)) continue;
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline.includes(entry)) return pid;
  }
  throw new Error(`no ${entry} process under ${root}`);
}

/** A turn, once the dead turn's lease is free (its missed beats make it dead within seconds). */
async function turnOnceFree(api: ReturnType<typeof apiClient>, sessionId: string, prompt: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await api.turn(sessionId, prompt);
    if (res.status !== 409 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 500));
  }
}
