import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

/** The text of the first user message the model received in the latest request. */
function openingOf(requests: { body: { messages: { content: unknown }[] } }[]): string {
  return JSON.stringify(requests.at(-1)!.body.messages[0]!.content);
}

describe('set-up steps of a session (settings, once per session, crashes, opting out)', () => {
  const fx = useLocalStack({ brain: unscripted });

  it("runs the session's script once before its first turn; a failure is an event, a record and a note to the model", async () => {
    const create = await fx.api.request('POST', '/v1/sessions', {
      files: { 'README.md': 'hello\n' },
      settings: { setup: { script: 'echo installing; echo ran >> .setup-runs; echo "missing dependency: left-pad" >&2; exit 3', timeoutSeconds: 60 } },
    });
    expect(create.status).toBe(201);
    const id = create.json.id as string;
    fx.stack.model!.enqueue(text('Noted: the set-up failed.'), text('Second turn.'));

    const { events } = await fx.api.turnSse(id, 'start');
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['turn_start', 'setup_start', 'setup_end']);
    expect(events[1]).toMatchObject({ type: 'setup_start', source: 'session_setting', timeoutSeconds: 60 });
    expect(events[2]).toMatchObject({ type: 'setup_end', status: 'failed', exitCode: 3, timedOut: false });
    expect((events[2] as { outputTail: string }).outputTail).toContain('missing dependency: left-pad');

    // The prompt comes first; the note follows it in the same message.
    const opening = openingOf(fx.stack.model!.requests);
    expect(opening.indexOf('"start"')).toBeLessThan(opening.indexOf('The set-up steps'));
    expect(opening).toContain(
      "The set-up steps of this workspace (the session's set-up script) ran before this conversation and did not succeed: they failed with exit code 3",
    );
    expect(opening).toContain('missing dependency: left-pad');

    const session = (await fx.api.request('GET', `/v1/sessions/${id}`)).json;
    expect(session.setup).toMatchObject({ status: 'failed', source: 'session_setting', exitCode: 3, timeoutSeconds: 60 });

    // The second turn runs nothing: no set-up event, no note, the script's mark written once.
    const second = await fx.api.turnSse(id, 'again');
    expect(second.events.map((e) => e.type)).not.toContain('setup_start');
    expect(openingOf(fx.stack.model!.requests)).not.toContain('"again"');
    const runs = await fx.api.request('GET', `/v1/sessions/${id}/workspace/files/.setup-runs`);
    expect(runs.text).toBe('ran\n');
  });

  it("runs the workspace's .stratus/setup.sh at the workspace root and tells the model it succeeded", async () => {
    const create = await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'set -e\npwd\ntouch installed.flag\n' } });
    const id = create.json.id as string;
    fx.stack.model!.enqueue(text('ok'));
    const { events } = await fx.api.turnSse(id, 'go');
    expect(events[1]).toMatchObject({ type: 'setup_start', source: 'repository_file', command: 'bash .stratus/setup.sh' });
    expect(events[2]).toMatchObject({ type: 'setup_end', status: 'succeeded', exitCode: 0, outputTail: '/workspace\n' });
    // The harness's own context, marked as such after the prompt (the prompt stays the message's first text).
    expect(openingOf(fx.stack.model!.requests)).toContain(
      '<system-reminder>\\nThe set-up steps of this workspace (.stratus/setup.sh) ran before this conversation: they succeeded in',
    );
    expect((await fx.api.request('GET', `/v1/sessions/${id}/workspace/files/installed.flag`)).status).toBe(200);
  });

  it("runs the tenant's default set-up where neither the session nor the workspace names one; a .stratus/setup.sh wins over it", async () => {
    const put = await fx.api.request('PUT', '/v1/tenant/settings', { setup: { script: 'echo tenant-default > tenant.flag', timeoutSeconds: 30 } });
    expect(put.status).toBe(200);
    try {
      const plain = (await fx.api.request('POST', '/v1/sessions', { files: { 'a.txt': 'a' } })).json.id as string;
      fx.stack.model!.enqueue(text('ok'));
      const { events } = await fx.api.turnSse(plain, 'go');
      expect(events[1]).toMatchObject({ type: 'setup_start', source: 'tenant_setting', command: 'echo tenant-default > tenant.flag', timeoutSeconds: 30 });
      expect((await fx.api.request('GET', `/v1/sessions/${plain}/workspace/files/tenant.flag`)).text).toBe('tenant-default\n');
      expect(openingOf(fx.stack.model!.requests)).toContain(
        "The set-up steps of this workspace (the tenant's default set-up script) ran before this conversation",
      );

      const withFile = (await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'touch own.flag\n' } })).json.id as string;
      fx.stack.model!.enqueue(text('ok'));
      const second = await fx.api.turnSse(withFile, 'go');
      // The repository's own file wins; the tenant's time limit still applies.
      expect(second.events[1]).toMatchObject({ type: 'setup_start', source: 'repository_file', timeoutSeconds: 30 });
      const files = (await fx.api.request('GET', `/v1/sessions/${withFile}/workspace/files`)).json.files.map((f: { path: string }) => f.path);
      expect(files).toContain('own.flag');
      expect(files).not.toContain('tenant.flag');
    } finally {
      await fx.api.request('PUT', '/v1/tenant/settings', {});
    }
  });

  it("keeps what the set-up installed out of the session's and the first turn's diff: only the agent's change is shown", async () => {
    const id = (
      await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'mkdir -p vendor && echo "module.exports = 1;" > vendor/lib.js\n' } })
    ).json.id as string;
    fx.stack.model!.enqueue({ content: [bash('w1', 'echo "console.log(1);" > app.js')], stopReason: 'tool_use' }, text('wrote app.js'));
    const { events } = await fx.api.turnSse(id, 'write app.js');
    const turnId = (events[0] as { turnId: string }).turnId;
    expect(events.find((e) => e.type === 'setup_end')).toMatchObject({ status: 'succeeded', workspaceVersion: expect.any(Number) });
    for (const query of ['', `?turn=${turnId}`]) {
      const diff = (await fx.api.request('GET', `/v1/sessions/${id}/workspace/diff${query}`)).json;
      expect(
        diff.files.map((f: { kind: string; path: string }) => `${f.kind} ${f.path}`),
        query,
      ).toEqual(['added app.js']);
    }
    // The set-up's file is in the workspace all the same.
    expect((await fx.api.request('GET', `/v1/sessions/${id}/workspace/files/vendor/lib.js`)).text).toBe('module.exports = 1;\n');
  });

  it('stops a set-up at its own time limit and says so', async () => {
    const id = (
      await fx.api.request('POST', '/v1/sessions', { files: { 'a.txt': 'a\n' }, settings: { setup: { script: 'echo started; sleep 60', timeoutSeconds: 1 } } })
    ).json.id as string;
    fx.stack.model!.enqueue(text('ok'));
    const { events } = await fx.api.turnSse(id, 'go');
    expect(events.find((e) => e.type === 'setup_end')).toMatchObject({ status: 'failed', timedOut: true, outputTail: expect.stringContaining('started') });
    expect(openingOf(fx.stack.model!.requests)).toContain('did not succeed: they did not finish within their 1 s limit and were stopped');
    expect((await fx.api.request('GET', `/v1/sessions/${id}`)).json.setup).toMatchObject({ status: 'failed', timedOut: true, timeoutSeconds: 1 });
  });

  it('runs nothing with setup.enabled false, and nothing in an empty workspace', async () => {
    const off = (await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'touch ran.flag\n' }, settings: { setup: { enabled: false } } }))
      .json.id as string;
    const empty = (await fx.api.request('POST', '/v1/sessions', {})).json.id as string;
    for (const id of [off, empty]) {
      fx.stack.model!.enqueue(text('ok'));
      const { events } = await fx.api.turnSse(id, 'go');
      expect(events.map((e) => e.type)).not.toContain('setup_start');
      expect((await fx.api.request('GET', `/v1/sessions/${id}`)).json.setup).toBeNull();
    }
    expect((await fx.api.request('GET', `/v1/sessions/${off}/workspace/files/ran.flag`)).status).toBe(400); // no such file
  });

  it('a set-up whose turn died is marked interrupted by the next turn and not run again', async () => {
    const id = (await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'touch ran.flag\n' } })).json.id as string;
    // A turn took the lease, claimed the set-up and died before recording how it went.
    const sessions = fx.stack.deps.sessions;
    await sessions.acquireLease(id, { owner: 'dead-owner', turnId: 'turn_dead', kind: 'turn', expiresAt: Date.now() + 200, startedAt: Date.now() }, Date.now());
    expect(
      await sessions.claimSetup(id, 'dead-owner', {
        status: 'running',
        source: 'repository_file',
        turnId: 'turn_dead',
        startedAt: new Date().toISOString(),
        timeoutSeconds: 600,
        allowedDomains: [],
      }),
    ).toBe(true);
    await new Promise((r) => setTimeout(r, 400));

    fx.stack.model!.enqueue(text('ok'));
    const { status, events } = await fx.api.turnSse(id, 'go');
    expect(status).toBe(200);
    expect(events.find((e) => e.type === 'setup_end')).toMatchObject({ status: 'interrupted' });
    expect(events.map((e) => e.type)).not.toContain('setup_start');
    expect(openingOf(fx.stack.model!.requests)).toContain(
      'they were interrupted: the process running them stopped before they finished, and they are not run again',
    );
    expect((await fx.api.request('GET', `/v1/sessions/${id}`)).json.setup).toMatchObject({ status: 'interrupted', turnId: 'turn_dead' });
    expect((await fx.api.request('GET', `/v1/sessions/${id}/workspace/files/ran.flag`)).status).toBe(400); // no such file
  });

  it('refuses a non-public registry the operator does not allow (400 outbound_refused)', async () => {
    const res = await fx.api.request('POST', '/v1/sessions', { settings: { setup: { registries: { add: ['10.1.2.3:4873'] } } } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'outbound_refused' });
    expect(res.json.error.message).toContain('settings.setup.registries.add');
  });
});

describe("set-up registries the operator's own outbound policy does not allow", () => {
  // The operator lists a loopback registry but does not allow it in STRATUS_PRIVATE_NETWORK_ALLOW.
  const fx = useLocalStack({
    brain: unscripted,
    settings: { model: {}, turn: {}, api: {}, observability: {}, setup: { registries: ['127.0.0.1:9', 'registry.npmjs.org'] } },
  });

  it('are left out of the set-up allow-list, as a session could not list them either', async () => {
    const id = (await fx.api.request('POST', '/v1/sessions', { files: { '.stratus/setup.sh': 'true\n' } })).json.id as string;
    fx.stack.model!.enqueue(text('ok'));
    const { events } = await fx.api.turnSse(id, 'go');
    expect(events.find((e) => e.type === 'setup_start')).toMatchObject({ allowedDomains: ['registry.npmjs.org'] });
    expect((await fx.api.request('GET', `/v1/sessions/${id}`)).json.setup).toMatchObject({ status: 'succeeded', allowedDomains: ['registry.npmjs.org'] });
  });
});
