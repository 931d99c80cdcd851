import { cliFetch } from './http.ts';
import { Command, CommanderError } from 'commander';
import { apiFor } from './client.ts';
import { createConfigStore } from './config-store.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { listSessions, newSession, pullWorkspace, sessionLog, transcript } from './session-commands.ts';
import { scheduleCommands } from './schedule-commands.ts';
import { adminTokenCommands } from './admin-commands.ts';
import { adminGithubCommands, githubCommands } from './github-commands.ts';
import { adminFailureCommands } from './redrive-commands.ts';
import { answerCommand, attach, interruptTurn, runPrompt } from './turn-commands.ts';
import { decidePlanCommand, showPlans } from './plan-commands.ts';
import { answerQuestions } from './question-commands.ts';

/**
 * `stratus`: the command line for a Stratus API, local or deployed (README: the CLI). Every
 * command takes --json for scripts; exit codes are in exit-codes.ts.
 */
const store = createConfigStore(process.env);
const program = new Command('stratus')
  .description('Drive a Stratus coding agent: sessions, turns, approvals, workspaces, schedules.')
  .option('--json', 'print JSON for scripts')
  .exitOverride();
const json = () => program.opts<{ json?: boolean }>().json === true;
const print = (human: string, value: unknown) => process.stdout.write(`${json() ? JSON.stringify(value) : human}\n`);
const client = () => apiFor(store);
const session = (given?: string) => {
  const id = given ?? store.read().session;
  if (!id) throw new CliError('No session: give one, or create one with `stratus new`.', EXIT.usage);
  return id;
};
const turnOpts = () => ({ json: json(), out: process.stdout, interactive: process.stdin.isTTY === true && !json() });
let exitCode: number = EXIT.ok;

program
  .command('login')
  .description('keep the API URL and token in your config folder (mode 0600)')
  .requiredOption('--url <url>', 'the API, e.g. http://127.0.0.1:8787')
  .requiredOption('--token <token>', 'an API token')
  .action(async (o: { url: string; token: string }) => {
    const res = await cliFetch(`${o.url.replace(/\/+$/, '')}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${o.token}` } });
    if (res.status === 401) throw new CliError('The API refused this token.', EXIT.unauthorized);
    if (!res.ok) throw new CliError(`The API answered HTTP ${res.status}.`);
    store.write({ url: o.url, token: o.token });
    print(`logged in to ${o.url} (saved in ${store.file})`, { url: o.url, config: store.file });
  });

program
  .command('new')
  .description('create a session (it becomes the default for run)')
  .option('--from <dir>', 'fill the workspace from a local folder (without .git and node_modules)')
  .option('--git <url>', 'fill the workspace with a git clone')
  .option('--title <title>')
  .option('--permission-mode <mode>', 'default (ask), acceptEdits, plan, bypassPermissions, dontAsk')
  .action(async (o: { from?: string; git?: string; title?: string; permissionMode?: string }) => {
    const id = await newSession(client(), o, print);
    store.write({ session: id });
  });

program
  .command('run')
  .description('run a prompt and stream the turn')
  .argument('<prompt>')
  .option('-s, --session <id>', 'the session (default: the last `new`)')
  .action(async (prompt: string, o: { session?: string }) => {
    exitCode = await runPrompt(client(), session(o.session), prompt, turnOpts());
  });

program
  .command('attach')
  .description("follow a session's running (or last) turn, reconnecting as needed")
  .argument('[session]')
  .action(async (id?: string) => {
    exitCode = await attach(client(), session(id), turnOpts());
  });

program
  .command('approve')
  .description('approve a waiting tool call (default: every one waiting); the last answer resumes the turn')
  .argument('[session]')
  .argument('[toolUseId]')
  .option('--remember', 'keep allowing this call for the session')
  .action(async (id: string | undefined, toolUseId: string | undefined, o: { remember?: boolean }) => {
    exitCode = await answerCommand(client(), session(id), toolUseId, 'allow', { ...turnOpts(), remember: o.remember });
  });

program
  .command('deny')
  .description('deny a waiting tool call (default: every one waiting); the last answer resumes the turn')
  .argument('[session]')
  .argument('[toolUseId]')
  .option('-m, --message <text>', 'what to tell the model instead, e.g. how to go on')
  .action(async (id: string | undefined, toolUseId: string | undefined, o: { message?: string }) => {
    exitCode = await answerCommand(client(), session(id), toolUseId, 'deny', { ...turnOpts(), message: o.message });
  });

const collect = (value: string, previous: string[]) => [...previous, value];
program
  .command('answer')
  .description("the agent's waiting questions; with --answer/--other, answer one (the last answer resumes the turn), or --decline it")
  .argument('[session]')
  .argument('[toolUseId]', 'the question call (default: the only one waiting)')
  .option('-a, --answer <[N=]option>', "an option's label or number; the n-th goes to question n (N= picks the question; repeat for several)", collect, [])
  .option('-o, --other <[N=]text>', 'an answer in your own words (to the next question without one, or question N)', collect, [])
  .option('--note <[N=]text>', 'a note for the agent with the answer', collect, [])
  .option('--decline', 'do not answer: the agent is told the question was rejected and goes on')
  .option('-m, --message <text>', 'with --decline: what to tell the agent instead')
  .action(
    async (
      id: string | undefined,
      toolUseId: string | undefined,
      o: { answer: string[]; other: string[]; note: string[]; decline?: boolean; message?: string },
    ) => {
      exitCode = await answerQuestions(client(), session(id), toolUseId, o, { ...turnOpts(), print });
    },
  );

program
  .command('plan')
  .description("the agent's plans waiting for approval (ExitPlanMode)")
  .argument('[session]')
  .action(async (id?: string) => showPlans(client(), session(id), print));

program
  .command('approve-plan')
  .description('approve a waiting plan (default: the only one); the turn resumes in the mode given')
  .argument('[session]')
  .argument('[toolUseId]')
  .option('--mode <mode>', 'continue in default (ask) or acceptEdits', 'default')
  .option('--plan-file <file>', 'approve the plan as edited in this file')
  .action(async (id: string | undefined, toolUseId: string | undefined, o: { mode: 'default' | 'acceptEdits'; planFile?: string }) => {
    exitCode = await decidePlanCommand(client(), session(id), toolUseId, 'approve', { ...turnOpts(), ...o });
  });

program
  .command('reject-plan')
  .description('reject a waiting plan (default: the only one); the agent stays in plan mode')
  .argument('[session]')
  .argument('[toolUseId]')
  .option('-m, --message <text>', 'what the agent should change')
  .action(async (id: string | undefined, toolUseId: string | undefined, o: { message?: string }) => {
    exitCode = await decidePlanCommand(client(), session(id), toolUseId, 'reject', { ...turnOpts(), feedback: o.message });
  });

program
  .command('interrupt')
  .description("stop a session's running turn (or the one named) wherever it runs")
  .argument('[session]')
  .argument('[turnId]')
  .action(async (id?: string, turnId?: string) => interruptTurn(client(), session(id), turnId, print));

program
  .command('ls')
  .description('your sessions, newest first')
  .option('-n, --limit <n>', 'how many', '20')
  .action(async (o: { limit: string }) => listSessions(client(), Number(o.limit), print));

program
  .command('log')
  .description("a session's message log")
  .argument('[session]')
  .action(async (id?: string) => sessionLog(client(), session(id), print));

program
  .command('pull')
  .description("download a session's workspace into a folder (the session defaults to the last `new`)")
  .usage('[session] <dir>')
  .argument('[session]')
  .argument('[dir]')
  .action(async (first?: string, second?: string) => {
    // One argument is the folder: the session is the default one, which must then exist.
    const dir = second ?? first;
    if (!dir) throw new CliError('Give the folder to download into: `stratus pull [SESSION] DIR`.', EXIT.usage);
    const id = session(second === undefined ? undefined : first);
    await pullWorkspace(client(), id, dir, print);
  });

program
  .command('transcript')
  .description('the session as a Claude Code transcript (JSONL)')
  .argument('[session]')
  .option('-o, --out <file>', 'write to a file instead of stdout')
  .action(async (id: string | undefined, o: { out?: string }) => transcript(client(), session(id), o.out, process.stdout));

const schedules = program.command('schedules').description('scheduled tasks');
const sched = scheduleCommands(client, print);
schedules
  .command('ls')
  .description('list them')
  .action(() => sched.list());
schedules
  .command('add')
  .description('run a prompt on a cron schedule')
  .requiredOption('--name <name>')
  .requiredOption('--cron <expr>', 'five fields: minute hour day month weekday')
  .requiredOption('--prompt <prompt>')
  .option('--timezone <tz>')
  .option('--session <id>', 'run in this session (default: a new one each time)')
  .action((o: { name: string; cron: string; prompt: string; timezone?: string; session?: string }) => sched.add(o));
schedules
  .command('rm')
  .argument('<id>')
  .description('delete one')
  .action((id: string) => sched.remove(id));
schedules
  .command('run')
  .argument('<id>')
  .description('run one now, to its end')
  .action((id: string) => sched.run(id));

const github = program.command('github').description('GitHub: install the App (claims the installation), connect repositories');
const gh = githubCommands(client, print);
github
  .command('install')
  .description("print the App install link; GitHub's redirect claims the installation for this tenant")
  .action(() => gh.install());
github
  .command('installations')
  .description('the installations this tenant claimed')
  .action(() => gh.installations());
github
  .command('connect')
  .argument('<owner/name>')
  .description('connect a repository in a claimed installation')
  .option('--label <label>')
  .option('--mention <@handle>')
  .action((r: string, o: { label?: string; mention?: string }) => gh.connect(r, o));
github
  .command('repos')
  .description('the connected repositories')
  .action(() => gh.repos());

const admin = program.command('admin').description('operator commands (the admin token: --admin-token or STRATUS_ADMIN_TOKEN)').option('--admin-token <token>');
const tokens = admin.command('tokens').description('tenant tokens, stored hashed; rotate by creating a new one and revoking the old');
const tokenCmds = () =>
  adminTokenCommands(() => store.credentials().url, admin.opts<{ adminToken?: string }>().adminToken ?? process.env.STRATUS_ADMIN_TOKEN, print);
tokens
  .command('create')
  .description('make a token (printed once)')
  .requiredOption('--tenant <id>')
  .requiredOption('--label <text>')
  .action((o: { tenant: string; label: string }) => tokenCmds().create(o));
tokens
  .command('ls')
  .description('list tokens (no secrets)')
  .action(() => tokenCmds().list());
tokens
  .command('revoke')
  .argument('<tokenId>')
  .description('revoke one (401 within 30 s everywhere)')
  .action((id: string) => tokenCmds().revoke(id));
const adminGithub = admin.command('github').description('GitHub App installations per tenant, and connections for a tenant (the way in with a plain token)');
const ghAdmin = () =>
  adminGithubCommands(() => store.credentials().url, admin.opts<{ adminToken?: string }>().adminToken ?? process.env.STRATUS_ADMIN_TOKEN, print);
adminGithub
  .command('assign')
  .description('give an installation to a tenant')
  .requiredOption('--installation <id>')
  .requiredOption('--tenant <id>')
  .action((o: { installation: string; tenant: string }) => ghAdmin().assign(o));
adminGithub
  .command('ls')
  .description('every claimed installation')
  .action(() => ghAdmin().list());
adminGithub
  .command('revoke')
  .argument('<installationId>')
  .description('take an installation back; its deliveries stop at once')
  .action((id: string) => ghAdmin().revoke(id));
adminGithub
  .command('connect')
  .argument('<owner/name>')
  .description('connect a repository to a tenant')
  .requiredOption('--tenant <id>')
  .action((r: string, o: { tenant: string }) => ghAdmin().connect(r, o));

const failures = admin.command('failures').description('failed asynchronous work (continuations, purges, sub-agent runs, GitHub work) and its redrive');
const failureCmds = () =>
  adminFailureCommands(() => store.credentials().url, admin.opts<{ adminToken?: string }>().adminToken ?? process.env.STRATUS_ADMIN_TOKEN, print);
failures
  .command('ls')
  .description('every failed invocation, with its event kind and error')
  .action(() => failureCmds().list());
failures
  .command('redrive')
  .argument('[id]')
  .option('--all', 'send every failed invocation again')
  .description('send one failed invocation (or --all) again; one that fails again is listed anew')
  .action((id: string | undefined, o: { all?: boolean }) => failureCmds().redrive(id, o));

try {
  await program.parseAsync(process.argv);
  process.exitCode = exitCode;
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if (err instanceof CliError) {
    process.stderr.write(`stratus: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`stratus: ${(err as Error).message}\n`);
    process.exitCode = EXIT.failed;
  }
}
