import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackDomainProxy } from '../../../sandbox-runner/isolation/domain-proxy.ts';
import { NO_STACK_ENDPOINTS } from '../../../sandbox-runner/isolation/stack-endpoints.ts';
import { gitCheckout, gitPublish } from '../../../sandbox-runner/workspace/git-remote.ts';
import { startGitHttpServer } from '../../support/git-http-server.ts';
import { makeBareRepo } from '../../support/github-fixture.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

const TOKEN = 'ghs_runnerside0123456789';

describe("the runner's git for GitHub runs (checkout, commit and push outside the sandbox)", () => {
  const tmp = makeTempDir();
  let git: Awaited<ReturnType<typeof startGitHttpServer>>;
  let proxy: Awaited<ReturnType<typeof startLoopbackDomainProxy>>;
  let repo: ReturnType<typeof makeBareRepo>;
  let url: string;
  const opts = () => ({ url, token: TOKEN, allowHttp: true, timeoutMs: 60_000, scratchDir: path.join(tmp.dir, 'scratch'), proxy: proxy.url });
  const author = { name: 'Stratus', email: 's@example.com' };

  beforeAll(async () => {
    git = await startGitHttpServer({ projectRoot: path.join(tmp.dir, 'git'), token: TOKEN });
    repo = makeBareRepo(
      path.join(tmp.dir, 'git'),
      'o/r',
      { 'a.txt': 'one\n', '.gitignore': 'build/\n', 'build/kept.txt': 'tracked though ignored\n' },
      { pulls: { 3: { 'a.txt': 'fork\n' } } },
    );
    url = `${git.url}/o/r.git`;
    proxy = await startLoopbackDomainProxy([new URL(url).host], NO_STACK_ENDPOINTS);
  });
  afterAll(async () => {
    await proxy.close();
    await git.close();
    tmp.cleanup();
  });

  it('checks out a branch or a pull request head as a new branch, leaving no remote or token behind', async () => {
    const dest = path.join(tmp.dir, 'ws1');
    mkdirSync(dest);
    const sha = await gitCheckout(dest, { ...opts(), ref: 'refs/pull/3/head', branch: 'stratus/issue-3-x', depth: 1 });
    expect(sha).toBe(repo.rev('refs/pull/3/head'));
    expect(readFileSync(path.join(dest, 'a.txt'), 'utf8')).toBe('fork\n');
    expect(readFileSync(path.join(dest, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/stratus/issue-3-x\n');
    const config = readFileSync(path.join(dest, '.git', 'config'), 'utf8');
    expect(config).not.toMatch(/remote|url|extraheader/i);
    expect(JSON.stringify(readFileSync(path.join(dest, '.git', 'FETCH_HEAD'), 'utf8'))).not.toContain(TOKEN);
  });

  it('refuses refs that read as options and URLs with credentials', async () => {
    const dest = path.join(tmp.dir, 'ws-bad');
    mkdirSync(dest);
    await expect(gitCheckout(dest, { ...opts(), ref: '--upload-pack=touch /tmp/x', branch: 'b', depth: 1 })).rejects.toThrow('is not a branch, ref or commit');
    await expect(gitCheckout(dest, { ...opts(), url: url.replace('http://', 'http://u:p@'), ref: 'main', branch: 'b', depth: 1 })).rejects.toThrow(
      'Put credentials in "token"',
    );
  });

  it("commits the work tree on top of the base and pushes it, never using the workspace's own .git", async () => {
    const dest = path.join(tmp.dir, 'ws2');
    mkdirSync(dest);
    const base = await gitCheckout(dest, { ...opts(), ref: 'main', branch: 'stratus/issue-1-y', depth: 1 });
    // What a command in the sandbox could do to the workspace's repository: commands git would run.
    const marker = path.join(tmp.dir, 'pwned');
    writeFileSync(
      path.join(dest, '.git', 'config'),
      `[core]\n\tfsmonitor = "touch ${marker}; false"\n\thooksPath = /nonexistent\n[filter "x"]\n\tclean = touch ${marker}\n`,
    );
    writeFileSync(path.join(dest, '.gitattributes'), '* filter=x\n');
    writeFileSync(path.join(dest, 'a.txt'), 'two\n');
    mkdirSync(path.join(dest, 'build'), { recursive: true });
    writeFileSync(path.join(dest, 'build', 'new-output.bin'), 'ignored\n');
    const out = await gitPublish(dest, { ...opts(), base, branch: 'stratus/issue-1-y', message: 'Fix (#1)', author });
    expect(out).toMatchObject({ changed: true, pushed: true, files: ['.gitattributes', 'a.txt'] });
    expect(existsSync(marker)).toBe(false);
    expect(repo.show('stratus/issue-1-y', 'a.txt')).toBe('two');
    expect(repo.show('stratus/issue-1-y', 'build/kept.txt')).toBe('tracked though ignored');
    expect(repo.log('stratus/issue-1-y')[0]).toMatch(/ Stratus <s@example.com> Fix \(#1\)$/);
    expect(repo.parent('stratus/issue-1-y')).toBe(base);
    // Nothing changed since: no commit.
    const sha = out.changed && out.pushed ? out.sha : '';
    expect(await gitPublish(dest, { ...opts(), base: sha, branch: 'stratus/issue-1-y', message: 'again', author })).toEqual({ changed: false });
  });

  it("reports a rejected push (not a fast-forward) with git's words and without the token", async () => {
    const dest = path.join(tmp.dir, 'ws3');
    mkdirSync(dest);
    const base = await gitCheckout(dest, { ...opts(), ref: 'main', branch: 'stratus/issue-1-y', depth: 1 });
    writeFileSync(path.join(dest, 'a.txt'), 'three\n');
    const out = await gitPublish(dest, { ...opts(), base, branch: 'stratus/issue-1-y', message: 'conflicting', author });
    expect(out).toMatchObject({ changed: true, pushed: false });
    const error = out.changed && !out.pushed ? out.error : '';
    expect(error).toMatch(/rejected|fetch first|non-fast-forward/);
    expect(error).not.toContain(TOKEN);
  });
});
