import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const read = (id: string, file: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: { file_path: file } });
const today = () => new Date().toISOString().slice(0, 10);

/** The system prompt's text, whatever blocks it was split into for the prompt cache. */
function systemText(body: MessagesRequest): string {
  const system = body.system as string | { text: string }[];
  return typeof system === 'string' ? system : system.map((b) => b.text).join('');
}

/** A request's messages without prompt-cache markers (they move to the newest block on every request). */
function withoutCacheMarks(messages: MessagesRequest['messages']): unknown {
  return JSON.parse(JSON.stringify(messages, (k, v) => (k === 'cache_control' ? undefined : v)));
}

function firstBlock(body: MessagesRequest): string {
  const content = body.messages[0]!.content as { type: string; text: string }[];
  return content[0]!.text;
}

const PROJECT = {
  'CLAUDE.md': '# Rules\nRun `make check` before finishing.\n@docs/style.md\nNot an import: `@docs/nope.md`.\n@docs/missing.md\n',
  'docs/style.md': 'Indent with tabs.\n@../CLAUDE.md\n',
  'AGENTS.md': 'Use pnpm, never npm.\n',
  'src/CLAUDE.md': 'Files in src/ are generated; edit templates/ instead.\n',
  'src/a.ts': 'export const a = 1;\n',
  'src/b.ts': 'export const b = 2;\n',
  'src/deep/c.ts': 'export const c = 3;\n',
};

describe('what the model is told about its project', () => {
  const fx = useLocalStack({
    brain: unscripted,
    settings: {
      model: {},
      turn: {},
      api: {},
      observability: {},
      projectContext: { systemPromptAppend: 'Operator note: this deployment is the staging stack.', maxFileChars: 400 },
    },
  });
  const temp = makeTempDir();
  let gitServer: Awaited<ReturnType<typeof startGitHttpServer>>;

  beforeAll(async () => {
    // A repository on branch "trunk" with the project's files, served over smart HTTP.
    const work = path.join(temp.dir, 'work');
    const git = (...args: string[]) => execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { encoding: 'utf8' }).trim();
    mkdirSync(work, { recursive: true });
    git('init', '-q', '-b', 'trunk');
    for (const [name, body] of Object.entries(PROJECT)) {
      mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      writeFileSync(path.join(work, name), body);
    }
    git('add', '.');
    git('commit', '-qm', 'Add the project rules');
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(temp.dir, 'p.git')]);
    gitServer = await startGitHttpServer({ projectRoot: temp.dir });
  });
  afterAll(async () => {
    await gitServer?.close();
    temp.cleanup();
  });

  async function gitSession(): Promise<string> {
    const id = await fx.api.createSession();
    const res = await fx.api.request('POST', `/v1/sessions/${id}/workspace/git`, { url: `${gitServer.url}/p.git`, ref: 'trunk' });
    expect(res.status).toBe(201);
    return id;
  }

  it('opens the first message with the tenant, CLAUDE.md, its imports and AGENTS.md, attaches a subdirectory CLAUDE.md to the first Read under it, and ends the system prompt with the environment and a git snapshot', async () => {
    const { api } = fx;
    expect(
      (
        await api.request('PUT', '/v1/tenant/settings', {
          instructions: 'Write commit messages in English.',
          systemPromptAppend: 'Tenant note: answer tersely.',
        })
      ).status,
    ).toBe(200);
    try {
      await firstTurnOfGitSession();
    } finally {
      await api.request('PUT', '/v1/tenant/settings', {});
    }
  });

  async function firstTurnOfGitSession() {
    const { stack, api } = fx;
    const sessionId = await gitSession();
    const before = stack.model!.requests.length;
    stack.model!.enqueue({ content: [read('r1', '/workspace/src/a.ts'), read('r2', '/workspace/src/b.ts')] }, { content: [text('Read them.').content[0]!] });
    expect((await api.turn(sessionId, 'Look at src.')).json).toMatchObject({ stopReason: 'end_turn' });
    const [first, second] = stack.model!.requests.slice(before).map((r) => r.body);

    expect(firstBlock(first!)).toBe(
      '<system-reminder>\n' +
        'The people who run this project ask you to follow these instructions. They take precedence over your general habits; where two disagree, the more specific one (a later part) wins.\n\n' +
        "Instructions from the tenant's settings (for every session of this tenant):\n\nWrite commit messages in English.\n\n" +
        "Instructions from /workspace/CLAUDE.md (the project's CLAUDE.md):\n\n# Rules\nRun `make check` before finishing.\n@docs/style.md\nNot an import: `@docs/nope.md`.\n@docs/missing.md\n\n" +
        'Instructions from /workspace/docs/style.md (imported by /workspace/CLAUDE.md):\n\nIndent with tabs.\n@../CLAUDE.md\n\n' +
        "Instructions from /workspace/AGENTS.md (the project's AGENTS.md):\n\nUse pnpm, never npm.\n\n" +
        `Today's date is ${today()}.\n</system-reminder>`,
    );
    expect((first!.messages[0]!.content as unknown as { text: string }[])[1]!.text).toBe('Look at src.');

    const system = systemText(first!);
    expect(system.startsWith('You are Stratus, a coding agent')).toBe(true);
    expect(system).toContain('\n\nOperator note: this deployment is the staging stack.\n\nTenant note: answer tersely.\n\n# Environment\n');
    const environment = system.slice(system.indexOf('# Environment'));
    expect(environment).toMatch(
      new RegExp(
        '^# Environment\nFacts about where you run, noted when this session began:\n- Working directory: /workspace\n- Git repository: yes\n' +
          '- Platform: linux, in a sandbox; each Bash command runs in a fresh bash shell\n- Model: claude-sonnet-5-5\n' +
          `- Session started: ${today()}\n\n# Git snapshot\n` +
          'The repository as it was when this session began. It is not updated while you work: run git for its current state.\n' +
          'Current branch: trunk\nMain branch \\(the usual base of a pull request\\): trunk\nStatus:\n\\(clean\\)\nRecent commits:\n[0-9a-f]{7,} Add the project rules$',
      ),
    );

    // The first Read under src/ carries src/CLAUDE.md; the second does not carry it again.
    const results = second!.messages.at(-1)!.content as unknown as { tool_use_id: string; content: string }[];
    expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
      [
        'r1',
        '1\texport const a = 1;\n2\t\n\n<system-reminder>\nInstructions from /workspace/src/CLAUDE.md (for the files under /workspace/src/):\n\nFiles in src/ are generated; edit templates/ instead.\n</system-reminder>',
      ],
      ['r2', '1\texport const b = 2;\n2\t'],
    ]);
    // Later requests of the turn start with the same bytes.
    expect(systemText(second!)).toBe(system);
    expect(withoutCacheMarks(second!.messages.slice(0, 1))).toEqual(withoutCacheMarks(first!.messages));
  }

  it('sends the same prefix on the next turn, and remembers across turns which subdirectory files it attached', async () => {
    const { stack, api } = fx;
    const sessionId = await gitSession();
    stack.model!.enqueue({ content: [read('r1', '/workspace/src/a.ts')] }, text('ok'));
    await api.turn(sessionId, 'First.');
    const turn1 = stack.model!.requests.at(-1)!.body;
    // The workspace changes after the snapshot: the snapshot does not.
    stack.model!.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'b1', name: 'Bash', input: { command: 'echo more >> README.md && git checkout -q -b other' } },
          read('r2', '/workspace/src/deep/c.ts'),
        ],
      },
      text('ok'),
    );
    await api.turn(sessionId, 'Second.');
    const turn2 = stack.model!.requests.at(-2)!.body;
    const turn2End = stack.model!.requests.at(-1)!.body;

    expect(systemText(turn2)).toBe(systemText(turn1));
    expect(JSON.stringify(turn2.tools)).toBe(JSON.stringify(turn1.tools));
    expect(withoutCacheMarks(turn2.messages.slice(0, turn1.messages.length))).toEqual(withoutCacheMarks(turn1.messages));
    expect(systemText(turn2End)).toContain('Current branch: trunk\n');
    // src/CLAUDE.md came with turn 1's Read: turn 2's Read under src/deep/ brings nothing.
    const last = turn2End.messages.at(-1)!.content as unknown as { tool_use_id: string; content: string }[];
    expect(last.find((r) => r.tool_use_id === 'r2')!.content).toBe('1\texport const c = 3;\n2\t');
  });

  it('says so when the workspace is not a git repository, cuts a file past the cap with a note, and reads instructions afresh at each turn', async () => {
    const { stack, api } = fx;
    const long = `${'x'.repeat(99)}\n`.repeat(5);
    const sessionId = await api.createSession({ 'CLAUDE.md': long });
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: '/workspace/AGENTS.md', content: 'Added later.\n' } }] },
      text('ok'),
    );
    await api.turn(sessionId, 'One.');
    const turn1 = stack.model!.requests.at(-2)!.body;
    const system = systemText(turn1);
    expect(system).toContain('- Git repository: no (this workspace has no git repository; git commands will fail)\n');
    expect(system).not.toContain('# Git snapshot');
    expect(firstBlock(turn1)).toContain(
      `${'x'.repeat(99)}\n${'x'.repeat(99)}\n${'x'.repeat(99)}\n${'x'.repeat(99)}\n\n` +
        '[Cut by Stratus: /workspace/CLAUDE.md has 500 characters and only the first 400 are shown here. Read the file for the rest.]\n\n' +
        `Today's date is ${today()}.`,
    );
    // The file the model wrote is read at the next turn's start (from the version it starts on).
    stack.model!.enqueue(text('ok'));
    await api.turn(sessionId, 'Two.');
    expect(firstBlock(stack.model!.requests.at(-1)!.body)).toContain(
      "Instructions from /workspace/AGENTS.md (the project's AGENTS.md):\n\nAdded later.\n\nToday's date is",
    );
  });

  it('an empty workspace still gets the date', async () => {
    const { stack, api } = fx;
    const sessionId = await api.createSession();
    stack.model!.enqueue(text('ok'));
    await api.turn(sessionId, 'Hi.');
    expect(firstBlock(stack.model!.requests.at(-1)!.body)).toBe(`<system-reminder>\nToday's date is ${today()}.\n</system-reminder>`);
  });

  it('gives a general-purpose sub-agent the instructions and the git snapshot, and an Explore sub-agent only the date and the environment', async () => {
    const { stack, api } = fx;
    const sessionId = await gitSession();
    const before = stack.model!.requests.length;
    const agent = (id: string, type: string, prompt: string) => ({
      type: 'tool_use' as const,
      id,
      name: 'Agent',
      input: { description: type, prompt, subagent_type: type },
    });
    stack.model!.enqueue(
      { content: [agent('g1', 'general-purpose', 'SUB-G')] },
      text('g done'),
      { content: [agent('e1', 'Explore', 'SUB-E')] },
      text('e done'),
      text('all done'),
    );
    expect((await api.turn(sessionId, 'Delegate.')).json).toMatchObject({ stopReason: 'end_turn' });
    const requests = stack.model!.requests.slice(before).map((r) => r.body);
    const byPrompt = (p: string) => requests.find((r) => (r.messages[0]!.content as unknown as { text: string }[]).some((b) => b.text === p))!;
    const [parent, general, explore] = [byPrompt('Delegate.'), byPrompt('SUB-G'), byPrompt('SUB-E')];
    expect(firstBlock(general)).toBe(firstBlock(parent));
    expect(firstBlock(general)).toContain('Instructions from /workspace/CLAUDE.md');
    expect(systemText(general)).toContain('\n# Git snapshot\n');
    expect(firstBlock(explore)).toBe(`<system-reminder>\nToday's date is ${today()}.\n</system-reminder>`);
    expect(systemText(explore)).toContain('- Git repository: yes\n');
    expect(systemText(explore)).not.toContain('# Git snapshot');
  });

  it("keeps the tenant's settings, validated: unknown fields and oversized text are a 400 naming them", async () => {
    const { api } = fx;
    expect((await api.request('GET', '/v1/tenant/settings')).json).toMatchObject({ settings: {} });
    const unknown = await api.request('PUT', '/v1/tenant/settings', { instruction: 'typo' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('instruction');
    const long = await api.request('PUT', '/v1/tenant/settings', { instructions: 'x'.repeat(40_001) });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toContain('"instructions"');
    const put = await api.request('PUT', '/v1/tenant/settings', { systemPromptAppend: 'Be brief.' });
    expect(put.json).toMatchObject({ settings: { systemPromptAppend: 'Be brief.' }, updatedAt: expect.any(String) });
    expect((await api.request('GET', '/v1/tenant/settings')).json.settings).toEqual({ systemPromptAppend: 'Be brief.' });
    await api.request('PUT', '/v1/tenant/settings', {});
    expect((await api.request('GET', '/v1/tenant/settings')).json.settings).toEqual({});
  });
});
