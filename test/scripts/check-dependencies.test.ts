import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { check, importsOf } from '../../scripts/check-dependencies.ts';
import { makeTempDir } from '../support/temp-dir.ts';

type Rules = Parameters<typeof check>[1];

const RULES: Rules = {
  roots: ['app'],
  forbidFileCycles: true,
  forbidFolderCycles: true,
  forbidden: [{ from: '^app/low/', to: '^app/high/', why: 'low must not know high' }],
};

/** Writes `files` (path → source) under a fresh directory. */
function fixture(files: Record<string, string>): string {
  const tmp = makeTempDir('stratus-deps-');
  cleanups.push(tmp.cleanup);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(tmp.dir, file)), { recursive: true });
    writeFileSync(path.join(tmp.dir, file), source);
  }
  return tmp.dir;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A layered tree: high → mid → low, nothing upward. */
const LAYERED = {
  'app/high/top.ts': "import { mid } from '../mid/mid.ts';\nexport const top = mid;\n",
  'app/mid/mid.ts': "import type { Low } from '../low/low.ts';\nexport const mid: Low = 1;\n",
  'app/low/low.ts': 'export type Low = number;\n',
};

describe('check-dependencies', () => {
  it('reads static imports and re-exports, type-only and multi-line ones included', () => {
    const source = [
      "import type { A } from './a.ts';",
      'import {',
      '  b,',
      '  c,',
      "} from '../b.ts';",
      "export * from './c.ts';",
      "export type { D } from './d.ts';",
      "import './side-effect.ts';",
      'const x = 1;',
    ].join('\n');
    expect(importsOf(source)).toEqual(['./a.ts', '../b.ts', './c.ts', './d.ts', './side-effect.ts']);
  });

  it('finds nothing wrong in a layered tree, and still reports its folder graph', () => {
    const { problems, folders } = check(fixture(LAYERED), RULES);
    expect(problems).toEqual([]);
    expect(Object.fromEntries([...folders].map(([from, to]) => [from, [...to]]))).toEqual({
      'app/high': ['app/mid'],
      'app/mid': ['app/low'],
      'app/low': [],
    });
  });

  it('reports a cycle between two files (through a type-only import too)', () => {
    const root = fixture({
      'app/mid/a.ts': "import type { B } from './b.ts';\nexport type A = B[];\n",
      'app/mid/b.ts': "import type { A } from './a.ts';\nexport type B = A | 1;\n",
    });
    expect(check(root, RULES).problems).toEqual(['file cycle: app/mid/a.ts ↔ app/mid/b.ts']);
  });

  it('reports a cycle between folders even when no file cycle closes it', () => {
    const root = fixture({
      'app/one/a.ts': "import { b } from '../two/b.ts';\nexport const a = b;\n",
      'app/two/b.ts': 'export const b = 1;\n',
      'app/two/c.ts': "import { d } from '../one/d.ts';\nexport const c = d;\n",
      'app/one/d.ts': 'export const d = 2;\n',
    });
    expect(check(root, RULES).problems).toEqual(['folder cycle: app/one ↔ app/two']);
  });

  it('reports a forbidden edge with its reason, and an import of a missing file', () => {
    const root = fixture({
      ...LAYERED,
      'app/low/peek.ts': "import { top } from '../high/top.ts';\nimport { gone } from './gone.ts';\nexport const peek = [top, gone];\n",
    });
    const { problems } = check(root, RULES);
    expect(problems).toContain('app/low/peek.ts → app/high/top.ts: low must not know high');
    expect(problems).toContain('app/low/peek.ts imports app/low/gone.ts, which does not exist');
    // low → high closes high → mid → low into a folder cycle as well.
    expect(problems).toContain('folder cycle: app/high ↔ app/low ↔ app/mid');
    expect(problems).toHaveLength(3);
  });

  it("keeps the harness to the runner's wire protocol and shared helpers, and the shared helpers to themselves (the repository's own rules)", () => {
    const rules = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../dependency-rules.json'), 'utf8')) as Rules;
    const root = fixture({
      'sandbox-runner/protocol.ts': 'export type Request = object;\n',
      'sandbox-runner/runner.ts': 'export const run = 1;\n',
      'sandbox-runner/ops/files/file-text.ts': 'export const decode = 1;\n',
      'sandbox-runner/common/file-size.ts': "import { decode } from '../ops/files/file-text.ts';\nexport const size = decode;\n",
      'functions/tools/read-tool.ts':
        "import type { Request } from '../../sandbox-runner/protocol.ts';\n" +
        "import { size } from '../../sandbox-runner/common/file-size.ts';\n" +
        "import { decode } from '../../sandbox-runner/ops/files/file-text.ts';\n" +
        "import { run } from '../../sandbox-runner/runner.ts';\n" +
        'export const read: Request = [size, decode, run];\n',
    });
    const { problems } = check(root, rules);
    expect(problems.filter((p) => p.startsWith('functions/tools/read-tool.ts → ')).map((p) => p.split(':')[0])).toEqual([
      'functions/tools/read-tool.ts → sandbox-runner/ops/files/file-text.ts',
      'functions/tools/read-tool.ts → sandbox-runner/runner.ts',
    ]);
    expect(problems.filter((p) => p.startsWith('sandbox-runner/common/')).map((p) => p.split(':')[0])).toEqual([
      'sandbox-runner/common/file-size.ts → sandbox-runner/ops/files/file-text.ts',
    ]);
    expect(problems).toHaveLength(3);
  });

  it('reports a static import of a package that must load lazily, and lets type-only and dynamic imports through', () => {
    const rules: Rules = { ...RULES, loadLazily: [{ from: '^app/', packages: ['@big/sdk', 'heavy'], why: 'load it lazily' }] };
    const root = fixture({
      ...LAYERED,
      'app/mid/eager.ts': "import { Client } from '@big/sdk/client';\nexport * from 'heavy';\nexport const c = Client;\n",
      'app/mid/lazy.ts': [
        "import type { Client } from '@big/sdk';",
        "export type { Heavy } from 'heavy';",
        "import { light } from 'heavy-not';",
        "export const load = async (): Promise<Client> => (await import('@big/sdk')).make(light);",
      ].join('\n'),
    });
    expect(check(root, rules).problems.sort()).toEqual([
      'app/mid/eager.ts imports @big/sdk/client statically: load it lazily',
      'app/mid/eager.ts imports heavy statically: load it lazily',
    ]);
  });

  it('fails the command (so npm test fails) and prints the graph with --graph', async () => {
    const root = fixture({
      ...LAYERED,
      'app/low/peek.ts': "import { top } from '../high/top.ts';\nexport const peek = top;\n",
      'dependency-rules.json': JSON.stringify(RULES),
    });
    const script = path.resolve('scripts/check-dependencies.ts');
    const tsx = path.resolve('node_modules/.bin/tsx');
    const err = (await promisify(execFile)(tsx, [script, '--graph'], { cwd: root }).catch((e: unknown) => e)) as {
      code: number;
      stdout: string;
      stderr: string;
    };
    expect(err.code).toBe(1);
    expect(err.stdout).toContain('app/low → app/high');
    expect(err.stderr).toContain('app/low/peek.ts → app/high/top.ts: low must not know high');
  });
});
