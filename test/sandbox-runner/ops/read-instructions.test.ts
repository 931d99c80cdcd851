import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPaths } from '../../../sandbox-runner/ops/files/instruction-imports.ts';
import type { InstructionFile } from '../../../sandbox-runner/protocol.ts';
import { expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const LIMITS = { maxFileChars: 1_000, maxDepth: 5 };

describe('@path imports', () => {
  it('are mentions at a line start or after whitespace, outside code fences and code spans', () => {
    const text = [
      '@a.md and @./b.md',
      'mail me@example.com',
      '`@c.md` is code',
      '```',
      '@d.md',
      '```',
      '~~~sh',
      '@e.md',
      '~~~',
      'x @f\\ g.md',
      '@@h.md',
      '@i.md.',
    ].join('\n');
    expect(importPaths(text)).toEqual(['a.md', './b.md', 'f g.md', 'i.md.']);
  });
});

describe('the read_instructions op and Read with instructions', () => {
  let fx: RunnerFixture;
  let id: string;
  let version: number;
  beforeAll(async () => {
    fx = await startRunnerFixture();
    id = fx.newWorkspaceId();
    const files: Record<string, string> = {
      'CLAUDE.md': 'root\n@chain/1.md\n@~/home.md\n@/etc/hostname\n@/workspace/abs.md\n@../outside.md\n@link/secret.md\n@binary.md\n',
      'abs.md': 'absolute import\n',
      'binary.md': 'has a \u0000 byte\n',
      'AGENTS.md': 'agents\n@CLAUDE.md\n@abs.md\n',
      'src/CLAUDE.md': 'src rules\n@../abs.md\n@more.md\n',
      'src/more.md': 'more src rules\n',
      'src/deep/AGENTS.md': 'deep agents\n',
      'src/deep/x.ts': 'x\n',
    };
    for (let i = 1; i <= 7; i++) files[`chain/${i}.md`] = `level ${i}\n@${i + 1}.md\n`;
    const created = expectOk(await fx.call(id, 0, { type: 'create_workspace', files }));
    // A symlink that points out of the workspace is never followed.
    version = expectOk(
      await fx.call(id, created.version, { type: 'bash', command: 'ln -s /etc link && echo out > /tmp/x', timeoutMs: 10_000, background: 'never' }),
    ).version;
  });
  afterAll(async () => {
    await fx?.stop();
  });

  const paths = (files: InstructionFile[]) => files.map((f) => [f.path, f.importedBy ?? null]);

  it('follows imports depth-first to four levels below a file, each file once, never outside the workspace', async () => {
    const res = expectOk(
      await fx.call(id, version, {
        type: 'read_instructions',
        paths: ['/workspace/CLAUDE.md', '/workspace/.claude/CLAUDE.md', '/workspace/AGENTS.md'],
        limits: LIMITS,
      }),
    );
    if (res.result.type !== 'read_instructions') throw new Error('wrong result');
    expect(paths(res.result.files)).toEqual([
      ['/workspace/CLAUDE.md', null],
      ['/workspace/chain/1.md', '/workspace/CLAUDE.md'],
      ['/workspace/chain/2.md', '/workspace/chain/1.md'],
      ['/workspace/chain/3.md', '/workspace/chain/2.md'],
      ['/workspace/chain/4.md', '/workspace/chain/3.md'],
      ['/workspace/abs.md', '/workspace/CLAUDE.md'],
      ['/workspace/AGENTS.md', null],
    ]);
  });

  it('cuts a file at the cap and says how long it was', async () => {
    const res = expectOk(await fx.call(id, version, { type: 'read_instructions', paths: ['/workspace/AGENTS.md'], limits: { maxFileChars: 5, maxDepth: 1 } }));
    if (res.result.type !== 'read_instructions') throw new Error('wrong result');
    expect(res.result.files).toEqual([{ path: '/workspace/AGENTS.md', content: 'agent', chars: 26, truncated: true }]);
  });

  it('brings the instructions of the directories above a file read, outermost first, without those the session has', async () => {
    const instructions = { names: ['CLAUDE.md', 'AGENTS.md'], skip: ['/workspace/abs.md'], limits: LIMITS };
    const res = expectOk(await fx.call(id, version, { type: 'read', path: '/workspace/src/deep/x.ts', instructions }));
    if (res.result.type !== 'read' || res.result.kind !== 'text') throw new Error('wrong result');
    expect(paths(res.result.instructions!)).toEqual([
      ['/workspace/src/CLAUDE.md', null],
      ['/workspace/src/more.md', '/workspace/src/CLAUDE.md'],
      ['/workspace/src/deep/AGENTS.md', null],
    ]);
    const again = expectOk(
      await fx.call(id, version, {
        type: 'read',
        path: '/workspace/src/deep/x.ts',
        instructions: { ...instructions, skip: ['/workspace/src/CLAUDE.md', '/workspace/src/more.md', '/workspace/src/deep/AGENTS.md'] },
      }),
    );
    expect(again.result).not.toHaveProperty('instructions');
    const root = expectOk(await fx.call(id, version, { type: 'read', path: '/workspace/abs.md', instructions }));
    expect(root.result).not.toHaveProperty('instructions');
  });
});
