import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const BIN = path.resolve('cli/stratus.mjs');
type Ran = { code: number; stdout: string; stderr: string };

/** What a new user meets in the CLI's first hour (issue #34): each answer names what is wrong. */
describe('the stratus CLI on the paths a new user takes first', () => {
  const fx = useLocalStack({ brain: unscripted });
  const tmp = makeTempDir();

  /** The CLI in its own process, logged in through STRATUS_URL/STRATUS_TOKEN, with a fresh config folder (no default session). */
  const stratus = (env: Record<string, string>, ...args: string[]) =>
    new Promise<Ran>((resolve) => {
      const full = {
        ...process.env,
        STRATUS_CONFIG_DIR: path.join(tmp.dir, `config-${Math.random()}`),
        STRATUS_URL: fx.stack.apiUrl,
        STRATUS_TOKEN: fx.stack.token,
        NODE_OPTIONS: '',
        ...env,
      };
      execFile(process.execPath, [BIN, ...args], { env: full, timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const sessionIds = async () => ((await fx.api.request('GET', '/v1/sessions?limit=200')).json.sessions as { id: string }[]).map((s) => s.id);

  it('leaves no session behind when `new` cannot fill it', { timeout: 200_000 }, async () => {
    const before = await sessionIds();
    const missing = await stratus({}, 'new', '--from', path.join(tmp.dir, 'missing', 'dir'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^stratus: Cannot read .*missing\/dir: ENOENT/);
    // A clone that fails happens after the session exists: the session is deleted again.
    const clone = await stratus({}, 'new', '--git', 'http://127.0.0.1:9/nothing-here.git');
    expect(clone.code).not.toBe(0);
    expect(clone.stderr).toMatch(/^stratus: git clone failed: [\s\S]*\(HTTP 4\d\d\)\n$/);
    expect(await sessionIds()).toEqual(before);
  });

  it('names the URL and the reason when the API cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const ls = await stratus({ STRATUS_URL: `http://127.0.0.1:${port}` }, 'ls');
    expect(ls.code).toBe(1);
    expect(ls.stderr).toBe(`stratus: Cannot reach http://127.0.0.1:${port}/v1/sessions?limit=20&order=activity: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it('prints tool results as they are: one more line, a result that starts with a blank line, the stored duration of a replayed call', {
    timeout: 200_000,
  }, async () => {
    const made = JSON.parse((await stratus({}, '--json', 'new')).stdout).session.id as string;
    fx.stack.model!.enqueue(
      { content: [bash('toolu_five', 'seq 5'), bash('toolu_blank', "printf '\\nafter a blank line'"), bash('toolu_slow', 'sleep 1.5; echo slept')] },
      text('Done.'),
    );
    const run = await stratus({}, 'run', '-s', made, 'three commands');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/ {2}⎿ 1\n {4}2\n {4}3\n {4}4\n {4}… 1 more line \(\d+\.\ds\)\n/);
    expect(run.stdout).toMatch(/ {2}⎿ after a blank line \(/);

    const log = await stratus({}, 'log', made);
    expect(log.stdout).toContain('[result] after a blank line');

    // attach replays the finished turn at once; the slow call keeps the time it took.
    const attached = await stratus({}, 'attach', made);
    expect(attached.code).toBe(0);
    const took = /⎿ slept \((\d+\.\d)s\)/.exec(attached.stdout)?.[1];
    expect(Number(took)).toBeGreaterThanOrEqual(1);
  });

  it('says which session is missing when `pull` is given only a folder', async () => {
    const pull = await stratus({}, 'pull', path.join(tmp.dir, 'out'));
    expect(pull.code).toBe(2);
    expect(pull.stderr).toBe('stratus: No session: give one, or create one with `stratus new`.\n');
  });

  it('runs as the README invokes it, from a subfolder, with paths relative to it and no registry request', { timeout: 200_000 }, async () => {
    // Every CLI line of the README's CLI section uses the invocation run below, and no doc says `npx stratus`.
    const readme = readFileSync('README.md', 'utf8');
    const block = /## The CLI\n\n```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const cliLines = block.split('\n').filter((l) => /\bstratus\b/.test(l) && !l.startsWith('npm start'));
    expect(cliLines.length).toBeGreaterThan(5);
    for (const line of cliLines) expect(line).toMatch(/(^|\) )npm run -s stratus -- /);
    for (const doc of [
      'README.md',
      ...readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ])
      expect(readFileSync(doc, 'utf8'), doc).not.toContain('npx stratus');

    // A registry that only counts: the invocation must never ask it anything.
    const asked: string[] = [];
    const registry = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    // A folder inside the repository (npm finds the package from there; .tmp is git-ignored).
    mkdirSync(path.resolve('.tmp'), { recursive: true });
    const work = mkdtempSync(path.resolve('.tmp', 'cli-readme-'));
    const project = path.join(work, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'a.txt'), 'relative\n');
    try {
      const env = {
        ...process.env,
        STRATUS_CONFIG_DIR: path.join(tmp.dir, 'readme-config'),
        STRATUS_URL: fx.stack.apiUrl,
        STRATUS_TOKEN: fx.stack.token,
        NODE_OPTIONS: '',
        npm_config_registry: `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`,
      };
      const made = await new Promise<Ran>((resolve) => {
        // The exact invocation of the README's CLI section, run from a folder inside the repository.
        execFile(
          'npm',
          ['run', '-s', 'stratus', '--', '--json', 'new', '--from', './project'],
          { cwd: work, env: { ...env, PATH: process.env.PATH! }, timeout: 120_000 },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
      expect(made.code, made.stderr).toBe(0);
      expect(JSON.parse(made.stdout).workspace).toMatchObject({ files: 1 });
    } finally {
      await new Promise((r) => registry.close(r));
      rmSync(work, { recursive: true, force: true });
    }
    expect(asked).toEqual([]);
  });
});
