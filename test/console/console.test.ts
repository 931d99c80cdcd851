import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, seriousA11yViolations } from '../support/browser.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
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
  // GitHub's REST API stand-in, started first: the stack's GitHub App talks to it.
  const github = {} as { gh: GithubApiServer; privateKey: string };
  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    github.privateKey = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    github.gh = await startGithubApiServer({ appId: '77', appPublicKey: publicKey });
  });
  afterAll(() => github.gh?.close());
  const fx = useLocalStack(() => ({
    turn: { heartbeatMs: 200 },
    github: { webhookSecret: 'console-secret', appId: '77', privateKey: github.privateKey, apiUrl: github.gh.url },
  }));
  let browser: Browser;
  let page: Page;
  let base: string;
  // biome-ignore lint/suspicious/noDuplicateTestHooks: the GitHub stand-in's hooks run before useLocalStack's, the browser's after
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    // Ceilings, not durations: under the full suite a new workspace's first runner call has taken 20 s.
    page.setDefaultTimeout(60_000);
    base = `${fx.stack.apiUrl}/console/`;
  }, 60_000);
  // biome-ignore lint/suspicious/noDuplicateTestHooks: see the beforeAll above
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
    fx.stack.model!.enqueue({
      content: [
        { type: 'text', text: preface },
        { type: 'tool_use', name: 'Bash', input: { command: 'echo hello-console' } },
      ],
      stopReason: 'tool_use',
      delayMs: 150,
    });
    await page.getByLabel('Prompt').fill('please run `echo hello-console`');
    await page.getByRole('button', { name: 'Send' }).click();
    const tool = page.locator('details.tool[data-tool="Bash"]').first();
    await tool.locator('summary').getByText('done').waitFor();
    await tool.locator('summary').click();
    expect(await tool.locator('pre').allTextContents()).toEqual(['echo hello-console', 'hello-console']);
    expect(posts.map((p) => new URL(p.url).pathname)).toEqual(
      expect.arrayContaining(['/v1/sessions', expect.stringMatching(/^\/v1\/sessions\/[^/]+\/turns$/)]),
    );
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

  it("shows the agent's task list as a checklist while the turn writes it, and after a reload", async () => {
    const todos = [
      { content: 'Read the code', status: 'completed', activeForm: 'Reading the code' },
      { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
      { content: 'Run the tests', status: 'pending', activeForm: 'Running the tests' },
    ];
    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', name: 'TodoWrite', input: { todos } }], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'Planned.' }] },
    );
    await page.getByLabel('Prompt').fill('plan it');
    await page.getByRole('button', { name: 'Send' }).click();
    const list = page.getByRole('region', { name: /Task list/ });
    await list.getByText('Fixing the bug').waitFor();
    expect(await list.getByRole('heading').textContent()).toBe('Task list (1 of 3 done)');
    expect(await list.getByRole('checkbox', { name: 'Read the code: completed' }).isChecked()).toBe(true);
    expect(await list.getByRole('checkbox', { name: 'Run the tests: pending' }).isChecked()).toBe(false);
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    await page.reload();
    await page
      .getByRole('region', { name: /Task list/ })
      .getByText('Fixing the bug')
      .waitFor();
    await expectAccessible();
  });

  it('opens the diff of a turn that edited a file: its removed and added lines, marked and coloured', async () => {
    const listed = await fx.api.request('GET', '/v1/sessions');
    const sid = (listed.json.sessions as { id: string; title?: string }[]).find((x) => x.title === 'Watch a turn')!.id;
    // Two turns through the API (the demo brain runs a backticked command): one writes the file, one edits it.
    expect((await fx.api.turn(sid, "please run `printf 'alpha\\nbeta\\ngamma\\n' > poem.txt`")).json).toMatchObject({ stopReason: 'end_turn' });
    expect((await fx.api.turn(sid, 'please run `sed -i s/beta/BETA/ poem.txt`')).json).toMatchObject({ stopReason: 'end_turn' });
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

  it("answers the agent's question on a phone-sized screen, and the turn resumes with the answer", async () => {
    const question = {
      question: 'Which library should we use?',
      header: 'Library',
      options: [
        { label: 'dayjs', description: 'Small and familiar' },
        { label: 'luxon', description: 'Time zones built in' },
      ],
      multiSelect: false,
    };
    fx.stack.model!.enqueue(
      {
        content: [
          { type: 'text', text: 'One question first.' },
          { type: 'tool_use', name: 'AskUserQuestion', input: { questions: [question] } },
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Going with luxon.' }] },
    );
    await page.goto(`${base}#/`);
    await page.getByLabel('Title (optional)').fill('Asks a question');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: /Asks a question/ }).waitFor();
    await page.getByLabel('Prompt').fill('add dates');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Waiting for your answer' }).waitFor();
    await page.locator('details.tool summary', { hasText: 'AskUserQuestion' }).getByText('waiting for an answer').waitFor();
    await page.getByText('Answer what waits for you first.').waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const card = page.getByRole('article', { name: 'The agent asks' });
    await card.getByText('Which library should we use?').waitFor();
    const choice = card.getByRole('radio', { name: /luxon/ });
    expect((await card.locator('label.choice', { hasText: 'luxon' }).boundingBox())!.height).toBeGreaterThanOrEqual(44);
    const answer = card.getByRole('button', { name: 'Answer' });
    expect((await answer.boundingBox())!.height).toBeGreaterThanOrEqual(44); // a comfortable touch target
    expect(await page.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible();
    await shot('question-phone');
    await choice.check();
    await answer.click();
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    await page.getByRole('heading', { name: 'Waiting for your answer' }).waitFor({ state: 'detached' });
    await page.setViewportSize({ width: 1200, height: 900 });
    const sid = decodeURIComponent(page.url().split('/sessions/')[1]!);
    const results = (await fx.api.messages(sid)).flatMap((m) => m.content).filter((b: { type: string }) => b.type === 'tool_result');
    expect(results.map((r: { content: unknown }) => r.content)).toEqual([
      'User has answered your questions: "Which library should we use?"="luxon". You can now continue with the user\'s answers in mind.',
    ]);
  });

  it("approves the agent's plan, edited, on a phone-sized screen, and the turn resumes in the chosen mode", async () => {
    const plan = '1. Add formatDate\n2. Test it';
    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', name: 'EnterPlanMode', input: {} }], stopReason: 'tool_use' },
      { content: [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan } }], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'Starting.' }] },
    );
    await page.goto(`${base}#/`);
    await page.getByLabel('Title (optional)').fill('Presents a plan');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: /Presents a plan/ }).waitFor();
    await page.getByLabel('Prompt').fill('add dates');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Waiting for your approval of a plan' }).waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const card = page.getByRole('article', { name: "The agent's plan" });
    const text = card.getByLabel('Plan (edit it before approving if you like)');
    expect(await text.inputValue()).toBe(plan);
    const approve = card.getByRole('button', { name: 'Approve plan' });
    expect((await approve.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    expect(await page.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible();
    await shot('plan-phone');
    await text.fill(`${plan}\n3. Document it`);
    await card.getByRole('radio', { name: 'accepting file edits' }).check();
    await approve.click();
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    await page.getByRole('heading', { name: 'Waiting for your approval of a plan' }).waitFor({ state: 'detached' });
    await page.setViewportSize({ width: 1200, height: 900 });
    const sid = decodeURIComponent(page.url().split('/sessions/')[1]!);
    const results = (await fx.api.messages(sid)).flatMap((m) => m.content).filter((b: { type: string }) => b.type === 'tool_result');
    expect(results.at(-1).content).toContain(`## Approved Plan (edited by user):\n${plan}\n3. Document it`);
    expect((await fx.api.request('GET', `/v1/sessions/${sid}`)).json.permissions.mode).toBe('acceptEdits');
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
    await page
      .getByRole('status')
      .getByText(/Answered/)
      .waitFor();

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
    expect(texts).toHaveLength(4);
    expect(texts[0]).toMatch(/^idle.*Needs approval.*API.*ago.*in · .* out\$\d/);
    expect(texts[1]).toMatch(/Presents a plan/);
    expect(texts[2]).toMatch(/Asks a question/);
    expect(texts[3]).toMatch(/Watch a turn/);
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
    expect(listed.json.schedules.map((s: { name: string; cron: string; timezone: string }) => [s.name, s.cron, s.timezone])).toEqual([
      ['nightly tests', '30 2 * * *', 'Europe/Paris'],
    ]);
    await expectAccessible();
    await shot('schedules');
  });

  it('installs the GitHub App with a link, connects a repository of the claimed installation, edits its trigger label, and lists GitHub runs with their pull requests', async () => {
    // A run as the GitHub worker records it (the webhook path itself is covered by the GitHub tests).
    const now = new Date().toISOString();
    await fx.stack.deps.github.putRun({
      runId: 'ghr_console',
      tenantId: 'local',
      createdAt: now,
      updatedAt: now,
      deliveryId: 'd-console',
      repository: 'octo-org/app',
      number: 42,
      kind: 'issue',
      trigger: 'label',
      sender: 'octocat',
      branch: 'stratus/issue-42',
      outcome: 'pr_opened',
      pullRequestUrl: 'https://github.com/octo-org/app/pull/43',
      cost: { inputTokens: 1200, outputTokens: 300, usd: 0.0081 },
    });
    await page.goto(`${base}#/github`);
    // Not installed yet: the API's refusal is shown.
    await page.getByLabel('Repository (owner/name)').fill('octo-org/app');
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('is not in the repository list of any GitHub App installation this tenant has claimed');
    // The install link; GitHub installs the App on octo-org and sends the browser back to the setup URL.
    await page.getByRole('button', { name: 'Get an install link' }).click();
    const href = (await page.getByRole('link', { name: 'Install the App on GitHub' }).getAttribute('href'))!;
    expect(href).toContain(`${github.gh.url}/apps/stratus-test/installations/new?state=`);
    github.gh.addInstallation(808, 'octo-org');
    github.gh.addRepository({ id: 4_343, fullName: 'octo-org/app', installationId: 808 });
    const back = await fetch(
      `${fx.stack.apiUrl}/v1/github/installations/setup?installation_id=808&setup_action=install&state=${new URL(href).searchParams.get('state')}`,
    );
    expect(back.status).toBe(201);
    await page.reload();
    await page.getByRole('list', { name: 'Claimed installations' }).getByText('Installation 808 on octo-org').waitFor();
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
    // The theme lands on <html> in an effect after the render the click causes.
    await expect.poll(() => page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await page.locator('tbody tr').first().waitFor();
    await expectAccessible();
    await shot('sessions-dark');
    await page.locator('tbody a').first().click();
    await page.getByTestId('last-stop').waitFor();
    await expectAccessible();
  });

  /** Both themes' axe check of what the page shows now; leaves the page in the theme it found. */
  const expectAccessibleInBothThemes = async () => {
    await expectAccessible();
    const other = page.getByRole('button', { name: /^Switch to (light|dark) theme$/ });
    await other.click();
    await expectAccessible();
    await page.getByRole('button', { name: /^Switch to (light|dark) theme$/ }).click();
  };
  /** Opens the session of that title (created by an earlier test) and returns its id. */
  const openSession = async (title: string) => {
    const { sessions } = (await fx.api.request('GET', '/v1/sessions?limit=100')).json as { sessions: { id: string; title: string | null }[] };
    const id = sessions.find((x) => x.title === title)!.id;
    await page.goto(`${base}#/sessions/${id}`);
    await page.getByRole('heading', { name: new RegExp(title) }).waitFor();
    return id;
  };
  const loadedScripts = () =>
    page.evaluate("performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.js'))") as Promise<string[]>;

  it('highlights a source file in the viewer, loading the highlighter only when a file is opened', async () => {
    const source = 'export const answer: number = 42; // the answer\n';
    const sessionId = await fx.api.createSession({ 'src/answer.ts': source, 'notes.txt': 'plain words\n' });
    await page.goto(`${base}#/sessions/${sessionId}`);
    await page.reload();
    await page.getByRole('button', { name: 'src/answer.ts' }).waitFor();
    expect((await loadedScripts()).filter((n) => n.includes('highlighter'))).toEqual([]);
    await page.getByRole('button', { name: 'src/answer.ts' }).click();
    const code = page.getByRole('figure', { name: 'File src/answer.ts' }).locator('pre');
    await code.locator('.hljs-keyword').first().waitFor();
    expect(await code.getAttribute('data-language')).toBe('typescript');
    expect(await code.textContent()).toBe(source);
    expect(await code.locator('.hljs-keyword').allTextContents()).toEqual(expect.arrayContaining(['export', 'const']));
    expect(await code.locator('.hljs-comment').textContent()).toBe('// the answer');
    expect((await loadedScripts()).filter((n) => n.includes('highlighter'))).toHaveLength(1);
    await expectAccessibleInBothThemes();
    // A file in no known language stays plain text.
    await page.getByRole('button', { name: 'notes.txt' }).click();
    const plain = page.getByRole('figure', { name: 'File notes.txt' }).locator('pre');
    expect(await plain.textContent()).toBe('plain words\n');
    expect(await plain.locator('span').count()).toBe(0);
  });

  it('opens a persisted tool result from the log, and shows a sub-agent live and then nested under its Agent call', async () => {
    // Back on the first session (its workspace has run commands already, so no cold start): one turn with a result
    // too large to keep inline, then an Explore sub-agent that tries to read a file.
    await openSession('Watch a turn');
    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_cons_seq', name: 'Bash', input: { command: 'seq 1 40000' } }], stopReason: 'tool_use' },
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_cons_agent',
            name: 'Agent',
            input: { description: 'read the notes', prompt: 'SUB: read notes.txt', subagent_type: 'Explore' },
          },
        ],
        stopReason: 'tool_use',
      },
      {
        content: [{ type: 'tool_use', id: 'toolu_cons_sub_read', name: 'Read', input: { file_path: '/workspace/notes.txt' } }],
        stopReason: 'tool_use',
        delayMs: 100,
      },
      { content: [{ type: 'text', text: 'There are no notes.' }] },
      { content: [{ type: 'text', text: 'Both done.' }] },
    );
    await page.getByLabel('Prompt').fill('count high, then ask a helper');
    await page.getByRole('button', { name: 'Send' }).click();
    // While the sub-agent runs, its steps show under the Agent call, tagged with its type.
    const liveAgent = page.getByRole('region', { name: 'Current turn' }).locator('details.tool[data-tool="Agent"]');
    await expect.poll(() => liveAgent.textContent(), { timeout: 60_000 }).toContain('[Explore] started: read the notes');
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    await page.getByRole('region', { name: 'Current turn' }).waitFor({ state: 'detached' });
    expect(await page.getByText('[Explore] Read done').count()).toBe(0); // the live view has stepped aside

    const seq = page.locator('details.tool', { hasText: 'seq 1 40000' });
    await seq.locator('summary').click();
    expect(await seq.locator('pre').nth(1).textContent()).toMatch(/^<persisted-output>\nOutput too large/);
    await seq.getByRole('button', { name: /^Open the full output \(\d/ }).click();
    const full = await seq.getByRole('figure', { name: 'Full output' }).locator('pre').textContent();
    expect(full).toBe(Array.from({ length: 40_000 }, (_, i) => i + 1).join('\n'));

    const agent = page.locator('details.tool[data-tool="Agent"]');
    await agent.locator('summary').first().click();
    const sub = agent.locator('details.subagent');
    await sub.locator('summary').click();
    await sub.getByText(/Explore · completed · \d+ messages/).waitFor();
    await sub.getByText('There are no notes.').waitFor();
    const subRead = sub.locator('details.tool[data-tool="Read"]');
    expect(await subRead.getAttribute('data-error')).toBe('true');
    await subRead.locator('summary').click();
    expect(await subRead.locator('pre').nth(1).textContent()).toContain('File does not exist.');
    await expectAccessibleInBothThemes();
    await shot('session-subagent');
  });

  it('remembers an approval as a permission rule the person edits, edits the budgets, and shows stored turns in the timeline', async () => {
    // The approvals test's session: it asks before Bash writes, and its workspace is warm.
    const sessionId = await openSession('Needs approval');
    await page.getByLabel('Prompt').fill('please run `touch ruled.txt`');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.getByRole('article', { name: 'Bash wants to run' });
    await card.waitFor();
    await card.getByLabel('Allow everything this rule matches in this session:').check();
    const rule = card.getByLabel('Permission rule to remember');
    expect(await rule.inputValue()).toBe('Bash(touch ruled.txt:*)');
    await rule.fill('Bash(touch:*)');
    await expectAccessibleInBothThemes();
    await card.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => page.getByTestId('last-stop').textContent(), { timeout: 60_000 }).toBe('end_turn');
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}/permissions`)).json.rules).toEqual({ allow: ['Bash(touch:*)'] });

    await page.getByText('Edit budgets').click();
    await page.getByLabel('Turns', { exact: true }).fill('50');
    await page.getByLabel('Cost (USD)', { exact: true }).fill('2.5');
    await page.getByRole('button', { name: 'Save budgets' }).click();
    const turnsRow = page.locator('table.budgets tr', { has: page.getByRole('rowheader', { name: 'Turns' }) });
    await expect.poll(() => turnsRow.locator('td').first().textContent()).toBe('50');
    const stored = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.budgets;
    expect([stored.maxTurns.limit, stored.maxCostUsd.limit]).toEqual([50, 2.5]);

    // Loaded from the log (no turn watched since the reload): the timeline of a stored turn, from the stored times.
    await page.reload();
    const figure = page.getByRole('figure', { name: 'Timeline of a stored turn' });
    await figure.waitFor();
    const turnPicker = figure.getByLabel('Turn shown in the timeline');
    const messages = await fx.api.messages(sessionId);
    // Every stored turn with a model answer after its first message: each one that asked, and each one an answer resumed.
    expect(await turnPicker.locator('option').count()).toBe(
      new Set(
        messages
          .filter((m: { kind: string }, i: number) => m.kind === 'assistant' && messages[i - 1]?.turnId === messages[i].turnId)
          .map((m: { turnId: string }) => m.turnId),
      ).size,
    );
    expect(await turnPicker.locator('option').count()).toBeGreaterThanOrEqual(4);
    await turnPicker.selectOption({ index: 0 });
    const asked = messages.filter((m: { turnId: string }) => m.turnId === messages[0].turnId);
    const modelMs = Date.parse(asked[1].createdAt) - Date.parse(asked[0].createdAt);
    expect(await figure.getByRole('img').first().getAttribute('aria-label')).toBe(
      `model call from 0 ms for ${modelMs < 1_000 ? `${modelMs} ms` : `${(modelMs / 1_000).toFixed(1)} s`}`,
    );
    await expectAccessibleInBothThemes();
    await shot('session-stored-timeline');
  });

  it('edits a schedule and deletes it after a second, explicit confirmation', async () => {
    const created = await fx.api.request('POST', '/v1/schedules', {
      name: 'weekly report',
      cron: '0 9 * * 1',
      timezone: 'UTC',
      prompt: 'please write the report',
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    await page.goto(`${base}#/schedules`);
    const section = page.getByRole('region', { name: /weekly report/ });
    await section.getByRole('button', { name: 'Edit' }).click();
    const form = section.getByRole('form', { name: 'Edit weekly report' });
    await form.getByLabel('Name').fill('weekly summary');
    await form.getByLabel('Cron').fill('15 4 * * 1');
    expect(await form.locator('ol li').allTextContents()).toHaveLength(5);
    await expectAccessibleInBothThemes();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: /weekly summary/ }).waitFor();
    expect((await fx.api.request('GET', `/v1/schedules/${id}`)).json).toMatchObject({
      name: 'weekly summary',
      cron: '15 4 * * 1',
      prompt: 'please write the report',
    });

    const renamed = page.getByRole('region', { name: /weekly summary/ });
    await renamed.getByRole('button', { name: 'Delete…' }).click();
    expect((await fx.api.request('GET', `/v1/schedules/${id}`)).status).toBe(200); // one click removes nothing
    await renamed.getByRole('button', { name: 'Delete “weekly summary” for good' }).click();
    await renamed.waitFor({ state: 'detached' });
    expect((await fx.api.request('GET', `/v1/schedules/${id}`)).status).toBe(404);
  });

  it('fits a phone (390 px): no page scrolls sideways, and the header takes two rows at most', async () => {
    // A turn whose prompt makes a long label in the diff's turn selector, and a session id in the list.
    const sessionId = await fx.api.createSession({ 'notes.txt': 'one\n' });
    const long = 'please run `echo a prompt long enough to make the label of its turn wider than any phone screen is > long.txt`';
    expect((await fx.api.turn(sessionId, long)).json.stopReason).toBe('end_turn');
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const pages = { sessions: '#/', session: `#/sessions/${sessionId}`, approvals: '#/approvals', schedules: '#/schedules', github: '#/github' };
      for (const [name, hash] of Object.entries(pages)) {
        // Reloaded: a hash the tab already shows would not fetch the page's data again.
        await page.goto(`${base}${hash}`);
        await page.reload();
        await page.locator('main h1').first().waitFor();
        // Every list the page fetches has arrived (the widest content comes with the data).
        await page.waitForLoadState('networkidle');
        if (name === 'session')
          await page.getByLabel('Show the changes of').locator('option', { hasText: 'a prompt long enough' }).waitFor({ state: 'attached' });
        if (name === 'sessions') await page.getByText(sessionId).waitFor();
        // Page-side code as text (the project type-checks against Node's globals).
        const fit = (await page.evaluate(
          `({ width: document.documentElement.scrollWidth, header: document.querySelector('header.bar').getBoundingClientRect().height })`,
        )) as { width: number; header: number };
        expect({ name, width: fit.width }).toEqual({ name, width: 390 });
        // Two rows of 40 px touch targets and their padding; three rows took 177 px.
        expect(fit.header).toBeLessThanOrEqual(100);
        await shot(`${name}-phone`);
      }
    } finally {
      await page.setViewportSize({ width: 1200, height: 900 });
    }
  });

  it('lists the most recently active session first, as its Last activity column reads', async () => {
    const older = await fx.api.createSession();
    const newer = await fx.api.createSession();
    expect((await fx.api.request('PATCH', `/v1/sessions/${older}`, { title: 'Active again' })).status).toBe(200);
    await page.goto(`${base}#/`);
    await page.reload();
    const rows = page.locator('tbody tr');
    await rows.first().getByText('Active again').waitFor();
    const texts = await rows.allTextContents();
    expect(texts[0]).toContain(older);
    expect(texts[1]).toContain(newer);
  });

  it("shows a session's set-up steps on its page: the failure, what they could reach and the end of their output", async () => {
    const create = await fx.api.request('POST', '/v1/sessions', {
      title: 'Set-up fails',
      files: { 'README.md': 'x\n' },
      settings: { setup: { script: 'echo "npm ERR! 404 left-pad is not in this registry" >&2; exit 1' } },
    });
    const sid = create.json.id as string;
    expect((await fx.api.turn(sid, 'hello')).json).toMatchObject({ stopReason: 'end_turn' });
    await page.goto(`${base}#/sessions/${sid}`);
    await page.reload();
    const panel = page.getByRole('region', { name: /Set-up steps/ });
    await expect.poll(() => panel.getByTestId('setup-status').textContent()).toBe('failed');
    const shown = await panel.textContent();
    expect(shown).toContain("the session's set-up script");
    expect(shown).toContain('exit code 1');
    expect(shown).toContain('Could reach: registry.npmjs.org');
    expect(await panel.locator('pre').textContent()).toContain('npm ERR! 404 left-pad is not in this registry');
    await expectAccessible();
  });
});
