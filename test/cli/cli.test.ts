import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const BIN = path.resolve('cli/stratus.mjs');

describe('the stratus CLI against the local stack', () => {
  const fx = useLocalStack({ brain: unscripted });
  const tmp = makeTempDir();
  const configDir = path.join(tmp.dir, 'config');

  /** Runs the CLI as a user would (its own process), with its config in a temp folder. */
  const stratus = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { env: { ...process.env, STRATUS_CONFIG_DIR: configDir, NODE_OPTIONS: '' }, timeout: 60_000 },
        (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        },
      );
    });

  it('logs in, streams a turn, answers an approval and pulls the workspace', { timeout: 400_000 }, async () => {
    expect((await stratus('run', 'hi')).code).toBe(3); // not logged in yet
    expect((await stratus('login', '--url', fx.stack.apiUrl, '--token', 'wrong')).code).toBe(3);
    const login = await stratus('login', '--url', fx.stack.apiUrl, '--token', fx.stack.token);
    expect(login.code).toBe(0);
    expect(statSync(path.join(configDir, 'config.json')).mode & 0o777).toBe(0o600);

    // A session from a local folder; a turn streamed with its tool call, result and end.
    const project = path.join(tmp.dir, 'project');
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'a.txt'), 'hello\nfrom the cli\n');
    const created = await stratus('new', '--from', project);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^ses_\w+ with 1 files from /);
    fx.stack.model!.enqueue({ content: [{ type: 'text', text: 'Reading.' }, bash('toolu_cat', 'cat src/a.txt')] }, text('It greets you.'));
    const run = await stratus('run', 'please run `cat src/a.txt`');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Reading.');
    expect(run.stdout).toContain('● Bash(cat src/a.txt)');
    expect(run.stdout).toMatch(/ {2}⎿ hello\n {4}from the cli/);
    // The server prices the turn (usage.costUsd); run prints it with the usage.
    expect(run.stdout).toMatch(/It greets you\.\n— end_turn · \d+ input \+ \d+ output tokens · \$\d+\.\d{4}\n/);

    // A session that asks: the turn stops waiting (exit 5), `approve` resumes and streams it.
    const asking = await stratus('--json', 'new', '--from', project, '--permission-mode', 'default');
    const sessionId = JSON.parse(asking.stdout).session.id as string;
    fx.stack.model!.enqueue({ content: [bash('toolu_write', 'echo made by the agent > src/out.txt')] }, text('Wrote it.'));
    const waiting = await stratus('run', 'write a file');
    expect(waiting.code).toBe(5);
    expect(waiting.stdout).toContain('? Bash waits for permission: echo made by the agent > src/out.txt  [toolu_write]');
    expect(waiting.stdout).toContain('— awaiting_permission');
    const approved = await stratus('approve', sessionId);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('Wrote it.');
    expect(approved.stdout).toContain('— end_turn');
    expect((await stratus('approve', sessionId)).code).toBe(4); // nothing waits any more

    // The workspace, pulled into a local folder.
    const pulled = path.join(tmp.dir, 'pulled');
    const pull = await stratus('pull', sessionId, pulled);
    expect(pull.code).toBe(0);
    expect(readFileSync(path.join(pulled, 'src', 'out.txt'), 'utf8')).toBe('made by the agent\n');
    expect(readFileSync(path.join(pulled, 'src', 'a.txt'), 'utf8')).toBe('hello\nfrom the cli\n');

    // Scripts: --json listings; attach replays the last turn; unknown ids exit 4.
    const ls = await stratus('--json', 'ls');
    expect(JSON.parse(ls.stdout).sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
    const attached = await stratus('--json', 'attach', sessionId);
    const events = attached.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });
    const log = await stratus('log', sessionId);
    expect(log.stdout).toContain('[Bash {"command":"echo made by the agent > src/out.txt"}]');
    expect((await stratus('log', 'ses_nope')).code).toBe(4);
  });

  it("shows the agent's plan, rejects it with feedback, and approves the next one edited, in acceptEdits", { timeout: 400_000 }, async () => {
    expect((await stratus('login', '--url', fx.stack.apiUrl, '--token', fx.stack.token)).code).toBe(0);
    const planning = await stratus('--json', 'new', '--permission-mode', 'plan');
    const sessionId = JSON.parse(planning.stdout).session.id as string;
    fx.stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_p1', name: 'ExitPlanMode', input: { plan: '1. Use moment' } }] });
    const waiting = await stratus('run', 'add dates');
    expect(waiting.code).toBe(5);
    expect(waiting.stdout).toContain('? a plan waits for approval (stratus approve-plan / reject-plan)  [toolu_p1]\n    1. Use moment');
    expect((await stratus('plan', sessionId)).stdout).toBe('plan toolu_p1:\n1. Use moment\n');

    fx.stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_p2', name: 'ExitPlanMode', input: { plan: '1. Use dayjs' } }] });
    const rejected = await stratus('reject-plan', sessionId, '-m', 'Use dayjs');
    expect(rejected.code).toBe(5);
    expect(JSON.stringify(fx.stack.model!.requests.at(-1)!.body.messages.at(-1)!.content)).toContain('the user said:\\nUse dayjs');

    const edited = path.join(tmp.dir, 'plan.md');
    writeFileSync(edited, '1. Use dayjs\n2. Test it');
    fx.stack.model!.enqueue(text('Starting.'));
    const approved = await stratus('approve-plan', sessionId, '--mode', 'acceptEdits', '--plan-file', edited);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('Starting.');
    expect(JSON.stringify(fx.stack.model!.requests.at(-1)!.body.messages.at(-1)!.content)).toContain(
      '## Approved Plan (edited by user):\\n1. Use dayjs\\n2. Test it',
    );
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.permissions.mode).toBe('acceptEdits');
    expect((await stratus('approve-plan', sessionId)).code).toBe(4); // nothing waits any more
  });

  it('denies with a message for the model, and interrupts a running turn', { timeout: 400_000 }, async () => {
    expect((await stratus('login', '--url', fx.stack.apiUrl, '--token', fx.stack.token)).code).toBe(0);
    const asking = await stratus('--json', 'new', '--permission-mode', 'default');
    const sessionId = JSON.parse(asking.stdout).session.id as string;

    // deny --message: the model gets the message as the call's result, and the turn goes on.
    fx.stack.model!.enqueue({ content: [bash('toolu_push', 'git push --force')] });
    expect((await stratus('run', 'ship it')).code).toBe(5);
    fx.stack.model!.enqueue(text('I will open a pull request instead.'));
    const denied = await stratus('deny', sessionId, '--message', 'Never force-push; open a pull request instead.');
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain('I will open a pull request instead.');
    const sent = fx.stack.model!.requests.at(-1)!.body.messages.at(-1)!;
    expect(JSON.stringify(sent.content)).toContain('Never force-push; open a pull request instead.');

    // interrupt: the running turn stops (its Bash command is killed) and `run` ends with `interrupted`.
    expect((await stratus('interrupt', sessionId)).code).toBe(4); // nothing runs
    fx.stack.model!.enqueue({ content: [bash('toolu_long', 'sleep 120')] });
    const bypass = await stratus('--json', 'new');
    const longId = JSON.parse(bypass.stdout).session.id as string;
    const running = stratus('run', '-s', longId, 'run the long thing');
    let turnId: string | undefined;
    for (let i = 0; i < 200 && !turnId; i++) {
      await new Promise((r) => setTimeout(r, 250));
      turnId = (await fx.api.request('GET', `/v1/sessions/${longId}`)).json.currentTurnId ?? undefined;
    }
    expect(turnId).toMatch(/^turn_/);
    // Let the command reach the runner.
    await new Promise((r) => setTimeout(r, 1_000));
    const interrupted = await stratus('--json', 'interrupt', longId);
    expect(interrupted.code).toBe(0);
    expect(JSON.parse(interrupted.stdout)).toMatchObject({ turnId, state: 'stopped', lastTurn: { stopReason: 'interrupted' } });
    const ran = await running;
    expect(ran.stdout).toContain('— interrupted');
    expect(ran.code).toBe(0);
  });

  it('sends a folder past the direct limit through a presigned upload, and manages tenant tokens with the admin token', { timeout: 400_000 }, async () => {
    const adminToken = Object.entries(fx.stack.deps.config.apiTokens).find(([, tenant]) => tenant === '@admin')![0];
    const as = (token: string, ...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env = {
          ...process.env,
          STRATUS_CONFIG_DIR: path.join(tmp.dir, 'admin-config'),
          STRATUS_URL: fx.stack.apiUrl,
          STRATUS_TOKEN: token,
          STRATUS_ADMIN_TOKEN: adminToken,
          NODE_OPTIONS: '',
        };
        execFile(process.execPath, [BIN, ...args], { env, timeout: 120_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    // Incompressible bytes past DIRECT_UPLOAD_MAX_BYTES (4 MiB): the archive goes to S3 with the form.
    const big = path.join(tmp.dir, 'big');
    mkdirSync(big, { recursive: true });
    const bytes = randomBytes(5 * 1024 * 1024);
    writeFileSync(path.join(big, 'blob.bin'), bytes);
    const made = await as(fx.stack.token, '--json', 'new', '--from', big);
    expect(made.code, made.stderr).toBe(0);
    const { session, workspace } = JSON.parse(made.stdout);
    expect(workspace).toMatchObject({ files: 1, bytes: bytes.length });
    const file = await fetch(`${fx.stack.apiUrl}/v1/sessions/${session.id}/workspace/files/blob.bin`, {
      headers: { authorization: `Bearer ${fx.stack.token}` },
    });
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);

    const created = await as(fx.stack.token, '--json', 'admin', 'tokens', 'create', '--tenant', 'cli-tenant', '--label', 'from the cli');
    expect(created.code, created.stderr).toBe(0);
    const token = JSON.parse(created.stdout) as { token: string; tokenId: string };
    expect((await as(token.token, 'ls')).code).toBe(0);
    const listed = await as(fx.stack.token, 'admin', 'tokens', 'ls');
    expect(listed.stdout).toContain(`${token.tokenId}  cli-tenant`);
    expect(listed.stdout).not.toContain(token.token);
    expect((await as(fx.stack.token, 'admin', 'tokens', 'revoke', token.tokenId)).code).toBe(0);
    expect((await as(token.token, 'ls')).code).toBe(3);
    // A tenant token cannot manage tokens: 403, exit 3.
    expect((await as(fx.stack.token, 'admin', '--admin-token', fx.stack.token, 'tokens', 'ls')).code).toBe(3);
  });

  it('lists the most recently active session first', { timeout: 120_000 }, async () => {
    const older = await fx.api.createSession();
    const newer = await fx.api.createSession();
    expect((await fx.api.request('PATCH', `/v1/sessions/${older}`, { title: 'active again' })).status).toBe(200);
    const ls = await stratus('--json', 'ls');
    expect(ls.code).toBe(0);
    const listed = (JSON.parse(ls.stdout).sessions as { id: string }[]).map((s) => s.id);
    expect(listed.slice(0, 2)).toEqual([older, newer]);
  });
});
