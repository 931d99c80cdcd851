import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, seriousA11yViolations } from '../support/browser.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/** Where the run saves a screenshot of each main page (git-ignored). */
const SHOTS = path.resolve('test-results/console');

/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the
 * local stack with the scripted model: sign in, watch a turn stream, interrupt one, approve a
 * waiting Bash call from a phone-sized screen and see the turn resume, open a workspace file,
 * open the diff of a turn, create a schedule; axe-core on every main page in both themes.
 */
describe('the web console', { timeout: 150_000 }, () => {
  const fx = useLocalStack({ turn: { heartbeatMs: 200 } });
  let browser: Browser;
  let page: Page;
  let base: string;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    // Ceilings, not durations: under the full suite a new workspace's first runner call has taken 20 s.
    page.setDefaultTimeout(60_000);
    base = `${fx.stack.apiUrl}/console/`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const expectAccessible = async () => expect(await seriousA11yViolations(page)).toEqual([]);

  it('signs in with a token kept only in session storage, refusing a wrong one', async () => {
    await page.goto(base);
    await page.getByLabel('API token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 60_000 }).toContain('Invalid or revoked bearer token');
    await expectAccessible();
    await shot('sign-in');
    await page.getByLabel('API token').fill(fx.stack.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    // Page-side code is passed as text: this project type-checks against Node's globals, not the DOM's.
    expect(await page.evaluate('({ session: { ...sessionStorage }, local: localStorage.length, cookies: document.cookie })')).toEqual({
      session: { 'stratus.token': fx.stack.token },
      local: 0,
      cookies: '',
    });
  });

  it('starts a session and shows a scripted turn as it streams: text, the tool call with its result and duration', async () => {
    // Every body the console sends carries its SHA-256, as a CloudFront-fronted stack needs.
    const posts: { url: string; hash: string | undefined; body: string }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push({ url: request.url(), hash: request.headers()['x-amz-content-sha256'], body: request.postData() ?? '' });
    });
    await page.getByLabel('Title (optional)').fill('Watch a turn');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: /Watch a turn/ }).waitFor();
    // Every text the page shows while assistant text is still streaming (before its assistant_message).
    await page.evaluate(`{
      const seen = (globalThis.streamed = []);
      new MutationObserver(() => document.querySelectorAll('[data-streaming="true"]').forEach((e) => seen.push(e.textContent ?? '')))
        .observe(document.body, { subtree: true, childList: true, characterData: true });
    }`);
    // The first answer streams slowly (a pause between stream events); the demo brain reports after the call.
    const preface = 'Let me run that for you: it prints a greeting, and I will tell you what came back.';
    fx.stack.model!.enqueue({ content: [{ type: 'text', text: preface }, { type: 'tool_use', name: 'Bash', input: { command: 'echo hello-console' } }], stopReason: 'tool_use', delayMs: 150 });
    await page.getByLabel('Prompt').fill('please run `echo hello-console`');
    await page.getByRole('button', { name: 'Send' }).click();
    const tool = page.locator('details.tool[data-tool="Bash"]').first();
    await tool.locator('summary').getByText('done').waitFor();
    await tool.locator('summary').click();
    expect(await tool.locator('pre').allTextContents()).toEqual(['echo hello-console', 'hello-console']);
    expect(posts.map((p) => new URL(p.url).pathname)).toEqual(expect.arrayContaining(['/v1/sessions', expect.stringMatching(/^\/v1\/sessions\/[^/]+\/turns$/)]));
    for (const p of posts) expect(p.hash).toBe(createHash('sha256').update(p.body).digest('hex'));
    expect(await tool.locator('summary').textContent()).toMatch(/\d+(\.\d)? (ms|s)$/);
    await page.getByText('The scripted model ran 1 tool call(s):').waitFor();
    const streamed = (await page.evaluate('globalThis.streamed')) as string[];
    // The text showed up piece by piece: the page showed strict prefixes of it while it streamed.
    expect(streamed.filter((t) => t.length > 0 && t.length < preface.length && preface.startsWith(t)).length).toBeGreaterThan(0);
    await page.getByText(preface).waitFor();
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    await page.getByRole('figure', { name: 'Timeline of the turn' }).waitFor();
    await expectAccessible();
    await shot('session');
  });

  it('opens the diff of a turn that edited a file: its removed and added lines, marked and coloured', async () => {
    const listed = await fx.api.request('GET', '/v1/sessions');
    const sid = (listed.json.sessions as { id: string; title?: string }[]).find((x) => x.title === 'Watch a turn')!.id;
    // Two turns through the API (the demo brain runs a backticked command): one writes the file, one edits it.
    expect((await fx.api.turn(sid, "please run `printf 'alpha\\nbeta\\ngamma\\n' > poem.txt`")).json).toMatchObject({ stopReason: 'end_turn' });
    expect((await fx.api.turn(sid, "please run `sed -i s/beta/BETA/ poem.txt`")).json).toMatchObject({ stopReason: 'end_turn' });
    // The page may show this session already (an earlier test): load it afresh.
    await page.goto(`${base}#/sessions/${sid}`);
    await page.reload();
    const changes = page.getByRole('region', { name: 'Changes' });
    await changes.getByText('1 file changed, +3 −0').waitFor();
    const turns = await changes.getByLabel('Show the changes of').locator('option').allTextContents();
    expect(turns.at(-1)).toMatch(/^Turn \d+: please run `sed -i s\/beta\/BETA\/ poem.txt`$/);
    await changes.getByLabel('Show the changes of').selectOption({ label: turns.at(-1)! });
    await changes.getByText('1 file changed, +1 −1').waitFor();
    await changes.locator('summary', { hasText: 'poem.txt' }).click();
    const diff = changes.getByLabel('Diff of poem.txt');
    expect(await diff.locator('.diff-del').allTextContents()).toEqual(['-beta\n']);
    expect(await diff.locator('.diff-add').allTextContents()).toEqual(['+BETA\n']);
    expect(await diff.locator('.diff-ctx').allTextContents()).toEqual([' alpha\n', ' gamma\n']);
    expect(await changes.locator('summary', { hasText: 'poem.txt' }).textContent()).toMatch(/^modified poem\.txt/);
    await expectAccessible();
    await shot('session-diff');
  });

  it('reconnects with Last-Event-ID when the stream drops mid-turn, showing every event once', async () => {
    // The turn's response is cut after its third event, as a dropped connection would cut it.
    await page.route('**/v1/sessions/*/turns', async (route) => {
      const res = await route.fetch();
      const events = (await res.text()).split('\n\n');
      await route.fulfill({ response: res, body: `${events.slice(0, 3).join('\n\n')}\n\n` });
    });
    const resumedWith: (string | undefined)[] = [];
    page.on('request', (req) => req.url().includes('/events') && resumedWith.push(req.headers()['last-event-id']));
    await page.getByLabel('Prompt').fill('please run `echo once-only`');
    await page.getByRole('button', { name: 'Send' }).click();
    try {
      // For a moment the live view and the stored log (loaded as the turn ends) both show it.
      await page.getByText('- ok: once-only').first().waitFor();
    } finally {
      await page.unroute('**/v1/sessions/*/turns');
    }
    expect(resumedWith[0]).toMatch(/^\d+$/);
    await page.getByRole('region', { name: 'Current turn' }).waitFor({ state: 'detached' });
    expect(await page.locator('details.tool summary', { hasText: 'echo once-only' }).count()).toBe(1);
    expect(await page.getByText('- ok: once-only').count()).toBe(1);
  });

  it('interrupts a running turn: the Bash command is stopped and the turn ends interrupted', async () => {
    await page.getByLabel('Prompt').fill('please run `sleep 60`');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('details.tool summary', { hasText: 'sleep 60' }).getByText('running…').waitFor();
    await page.getByRole('button', { name: 'Interrupt' }).click();
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('interrupted');
    // Once the turn is stored, the stored log shows it and the live view steps aside.
    await page.getByRole('region', { name: 'Current turn' }).waitFor({ state: 'detached' });
    const interrupted = page.locator('details.tool', { hasText: 'sleep 60' });
    expect(await interrupted.getAttribute('data-error')).toBe('true');
  });

  it('approves a waiting Bash call on a phone-sized screen, and the turn resumes and writes the file', async () => {
    await page.goto(`${base}#/`);
    await page.getByLabel('Title (optional)').fill('Needs approval');
    await page.getByLabel('Permissions').selectOption('default');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: /Needs approval/ }).waitFor();
    const sessionUrl = page.url();
    await page.getByLabel('Prompt').fill('please run `echo approved > approved.txt`');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Waiting for your approval' }).waitFor();
    await page.locator('details.tool summary', { hasText: 'approved.txt' }).getByText('waiting for approval').waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}#/approvals`);
    const card = page.getByRole('article', { name: 'Bash wants to run' });
    expect(await card.locator('pre').first().textContent()).toBe('echo approved > approved.txt');
    const allow = card.getByRole('button', { name: 'Allow' });
    const box = (await allow.boundingBox())!;
    expect(box.height).toBeGreaterThanOrEqual(44); // a comfortable touch target
    await expectAccessible();
    await shot('approvals-phone');
    await allow.click();
    await page.getByRole('status').getByText(/Answered/).waitFor();

    await page.setViewportSize({ width: 1200, height: 900 });
    await page.goto(sessionUrl);
    await expect.poll(async () => (await page.reload(), page.getByTestId('last-stop').textContent()), { timeout: 60_000, interval: 500 }).toBe('end_turn');
    await page.getByText('- ok:', { exact: false }).first().waitFor();
    await page.getByRole('button', { name: 'approved.txt' }).click();
    expect(await page.getByRole('figure', { name: 'File approved.txt' }).locator('pre').textContent()).toBe('approved\n');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as .tar.gz' }).click()]);
    const tar = gunzipSync(readFileSync((await download.path())!));
    expect(tar.toString('latin1')).toContain('approved.txt');
    expect(download.suggestedFilename()).toMatch(/^ses_.+\.tar\.gz$/);
  });

  it('lists the sessions with status, title, source, tokens and cost', async () => {
    await page.goto(`${base}#/`);
    const rows = page.locator('tbody tr');
    await rows.first().waitFor();
    const texts = await rows.allTextContents();
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/^idle.*Needs approval.*API.*ago.*in · .* out\$\d/);
    expect(texts[1]).toMatch(/Watch a turn/);
    await expectAccessible();
    await shot('sessions');
  });

  it('creates a schedule, showing its next five firings in the chosen time zone', async () => {
    await page.goto(`${base}#/schedules`);
    await page.getByLabel('Name').fill('nightly tests');
    await page.getByLabel(/^Cron/).fill('30 2 * * *');
    await page.getByLabel('Time zone').fill('Europe/Paris');
    expect(await page.locator('#cron-help li').allTextContents()).toHaveLength(5);
    expect((await page.locator('#cron-help li').first().textContent())!).toMatch(/2:30\s?AM/);
    await page.getByLabel(/^Prompt/).fill('please run `npm test`');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('heading', { name: /nightly tests/ }).waitFor();
    const listed = await fx.api.request('GET', '/v1/schedules');
    expect(listed.json.schedules.map((s: { name: string; cron: string; timezone: string }) => [s.name, s.cron, s.timezone])).toEqual([['nightly tests', '30 2 * * *', 'Europe/Paris']]);
    await expectAccessible();
    await shot('schedules');
  });

  it('connects a repository, edits its trigger label, and lists GitHub runs with their pull requests', async () => {
    // A run as the GitHub worker records it (the webhook path itself is covered by the GitHub tests).
    const now = new Date().toISOString();
    await fx.stack.deps.github.putRun({
      runId: 'ghr_console', tenantId: 'local', createdAt: now, updatedAt: now, deliveryId: 'd-console', repository: 'octo-org/app',
      number: 42, kind: 'issue', trigger: 'label', sender: 'octocat', branch: 'stratus/issue-42', outcome: 'pr_opened',
      pullRequestUrl: 'https://github.com/octo-org/app/pull/43', cost: { inputTokens: 1200, outputTokens: 300, usd: 0.0081 },
    });
    await page.goto(`${base}#/github`);
    await page.getByLabel('Repository (owner/name)').fill('octo-org/app');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'octo-org/app' }).waitFor();
    await page.getByLabel('Label that starts a run').fill('agent-fix');
    await page.getByRole('button', { name: 'Save triggers' }).click();
    await expect.poll(async () => (await fx.api.request('GET', '/v1/github/repositories/octo-org/app')).json.label).toBe('agent-fix');
    const row = page.locator('tbody tr', { hasText: 'octo-org/app#42' });
    await row.waitFor();
    expect(await row.getByRole('link', { name: 'octo-org/app/pull/43' }).getAttribute('href')).toBe('https://github.com/octo-org/app/pull/43');
    expect(await row.textContent()).toContain('pr_opened');
    expect(await row.textContent()).toContain('stratus/issue-42');
    await expectAccessible();
    await shot('github');
  });

  it('has no serious accessibility violations in the dark theme either', async () => {
    await page.goto(`${base}#/`);
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await page.locator('tbody tr').first().waitFor();
    await expectAccessible();
    await shot('sessions-dark');
    await page.locator('tbody a').first().click();
    await page.getByTestId('last-stop').waitFor();
    await expectAccessible();
  });
});
