import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMoves } from '../../scripts/reorganise/apply.ts';
import { rewriteRules } from '../../scripts/reorganise/dependency-rules.ts';
import { applyDocEdits } from '../../scripts/reorganise/doc-edits.ts';
import { rewriteFolderTable } from '../../scripts/reorganise/folder-table.ts';
import type { MoveMap } from '../../scripts/reorganise/plan.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

const git = (dir: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' });

/** A committed git repository holding `files`. */
function repo(files: Record<string, string>): string {
  const tmp = makeTempDir('stratus-reorganise-');
  cleanups.push(tmp.cleanup);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(tmp.dir, file)), { recursive: true });
    writeFileSync(path.join(tmp.dir, file), text);
  }
  git(tmp.dir, 'init', '-q');
  git(tmp.dir, 'add', '-A');
  git(tmp.dir, 'commit', '-qm', 'fixture');
  return tmp.dir;
}

const read = (dir: string, file: string): string => readFileSync(path.join(dir, file), 'utf8');

const MAP: MoveMap = {
  files: { 'functions/engine/turn.ts': 'functions/turn/turn.ts' },
  folders: { 'functions/old/': 'functions/new/' },
};

const FILES = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', allowImportingTsExtensions: true, noEmit: true, strict: true }, include: ['functions', 'test'] }),
  'functions/engine/turn.ts': "import type { Settings } from '../old/settings.ts';\nimport { loop } from './loop.ts';\nexport const turn = (s: Settings) => loop(s);\nexport const worker = new URL('./loop.ts', import.meta.url);\n",
  'functions/engine/loop.ts': "// see ./turn.ts; ./elsewhere.ts is nothing of ours\nexport const loop = (s: unknown) => [s];\nexport type T = import(/* a type */ './turn.ts').Turn;\n",
  'functions/old/settings.ts': 'export type Settings = { mode: string };\n',
  'functions/old/added-by-another-branch.ts': "export { turn } from '../engine/turn.ts';\n",
  'functions/api/route.ts': "/** Calls `functions/engine/turn.ts`. */\nexport const load = () => import('../engine/turn.ts');\n",
  'test/functions/engine/turn.test.ts': "import { turn } from '../../../functions/engine/turn.ts';\nexport const t = turn;\n",
  'docs/turns.md': 'The turn ([turn.ts](../functions/engine/turn.ts)) reads `functions/old/settings.ts`; the loop stays in `functions/engine/loop.ts`.\n',
};

describe('reorganise-folders', () => {
  it('moves listed files, whole folders and mirrored tests, and rewrites imports and mentions of them', () => {
    const dir = repo(FILES);
    const { moved } = applyMoves(dir, MAP);
    expect(Object.fromEntries(moved)).toEqual({
      'functions/engine/turn.ts': 'functions/turn/turn.ts',
      'functions/old/settings.ts': 'functions/new/settings.ts',
      'functions/old/added-by-another-branch.ts': 'functions/new/added-by-another-branch.ts',
      'test/functions/engine/turn.test.ts': 'test/functions/turn/turn.test.ts',
    });
    expect(read(dir, 'functions/turn/turn.ts')).toBe(
      "import type { Settings } from '../new/settings.ts';\nimport { loop } from '../engine/loop.ts';\nexport const turn = (s: Settings) => loop(s);\nexport const worker = new URL('../engine/loop.ts', import.meta.url);\n",
    );
    // A relative path in a comment follows the file it names; one naming nothing in the repository stays.
    expect(read(dir, 'functions/engine/loop.ts')).toBe("// see ../turn/turn.ts; ./elsewhere.ts is nothing of ours\nexport const loop = (s: unknown) => [s];\nexport type T = import(/* a type */ '../turn/turn.ts').Turn;\n");
    expect(read(dir, 'functions/new/added-by-another-branch.ts')).toBe("export { turn } from '../turn/turn.ts';\n");
    expect(read(dir, 'functions/api/route.ts')).toBe("/** Calls `functions/turn/turn.ts`. */\nexport const load = () => import('../turn/turn.ts');\n");
    expect(read(dir, 'test/functions/turn/turn.test.ts')).toContain("from '../../../functions/turn/turn.ts'");
    expect(read(dir, 'docs/turns.md')).toBe('The turn ([turn.ts](../functions/turn/turn.ts)) reads `functions/new/settings.ts`; the loop stays in `functions/engine/loop.ts`.\n');
    // Moved in git's index, not only on disk: the lead commits what the script staged.
    const tracked = git(dir, 'ls-files').split('\n');
    expect(tracked).toContain('functions/turn/turn.ts');
    expect(tracked).not.toContain('functions/engine/turn.ts');
  });

  it('changes nothing when run a second time', () => {
    const dir = repo(FILES);
    applyMoves(dir, MAP);
    const staged = git(dir, 'diff', '--cached', '--stat');
    expect(applyMoves(dir, MAP)).toEqual({ moved: [], edited: [] });
    expect(git(dir, 'diff', '--cached', '--stat')).toBe(staged);
    expect(git(dir, 'diff', '--stat')).toBe('');
  });

  it('refuses a map that would overwrite a file, and then changes nothing', () => {
    const dir = repo({ ...FILES, 'functions/turn/turn.ts': 'export {};\n' });
    expect(() => applyMoves(dir, MAP)).toThrow(/functions\/engine\/turn\.ts → functions\/turn\/turn\.ts, which already exists/);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('renames folders in the dependency rules and adds rules once', () => {
    const rules = '{\n  "forbidden": [\n    {"from": "^functions/stores/", "to": "^functions/(agent|sessions)/", "why": "low"},\n    {"from": "^functions/shared/", "to": "^functions/(?!shared/)", "why": "bottom"}\n  ]\n}\n';
    const changes = { renames: { sessions: ['session'], agent: ['agent', 'turn'] }, upsert: [{ from: '^functions/turn/', to: '^functions/(session)/', why: 'below sessions' }] };
    const once = rewriteRules(rules, changes);
    expect(once).toBe(
      '{\n  "forbidden": [\n    {"from": "^functions/stores/", "to": "^functions/(agent|turn|session)/", "why": "low"},\n    {"from": "^functions/shared/", "to": "^functions/(?!shared/)", "why": "bottom"},\n    {"from": "^functions/turn/", "to": "^functions/(session)/", "why": "below sessions"}\n  ]\n}\n',
    );
    expect(rewriteRules(once, changes)).toBe(once);
  });

  it('rewrites the folder table: rows dropped, added after their neighbour, imports written from the graph', () => {
    const table = ['| folder | holds | may import | imports today |', '| --- | --- | --- | --- |', '| `functions/shared/` | helpers | nothing of the product | nothing |', '| `functions/old/` | settings | no extra rule | nothing |', '| `functions/engine/` | the turn | no extra rule | old, shared |', '| `local/` | the stack | no extra rule | functions/engine |'].join('\n');
    const before = new Map([['functions/engine', new Set(['functions/old', 'functions/shared'])], ['local', new Set(['functions/engine'])]]);
    const after = new Map([['functions/engine', new Set(['functions/shared'])], ['functions/turn', new Set(['functions/engine', 'functions/new'])], ['local', new Set(['functions/engine', 'functions/turn', 'local/net'])], ['functions/shared', new Set<string>()]]);
    const changes = { removed: ['functions/old'], rows: [{ folder: 'functions/turn', after: 'functions/engine', holds: 'the turn now' }] };
    const rules = [{ from: '^functions/turn/', to: '^functions/(api|handlers)/', why: '' }];
    const once = rewriteFolderTable(table, changes, rules, before, after);
    expect(once.split('\n').slice(2)).toEqual([
      '| `functions/shared/` | helpers | nothing of the product | nothing |',
      '| `functions/engine/` | the turn | no extra rule | shared |',
      '| `functions/turn/` | the turn now | not api, handlers | engine, new |',
      '| `local/` | the stack | no extra rule | functions/engine, turn; local/net |',
    ]);
    expect(rewriteFolderTable(once, changes, rules, after, after)).toBe(once);
  });

  it('rewrites whole lines of prose once, deletes lines, and reports lines another branch reworded', () => {
    const doc = 'a\n  api --> engine\nold line\nb\n';
    const edits = [
      { file: 'd.md', from: '  api --> engine', to: '  api --> engine\n  api --> lifecycle' },
      { file: 'd.md', from: 'old line', to: '' },
      { file: 'd.md', from: 'reworded elsewhere', to: 'new words' },
    ];
    const reported: string[] = [];
    const once = applyDocEdits(doc, edits, (e) => reported.push(e.from));
    expect(once).toBe('a\n  api --> engine\n  api --> lifecycle\nb\n');
    expect(reported).toEqual(['reworded elsewhere']);
    expect(applyDocEdits(once, edits.slice(0, 2), () => reported.push('again'))).toBe(once);
    expect(reported).toEqual(['reworded elsewhere']);
  });
});
