/**
 * The folder reorganisation of issue #26 (part 2): the turn gets its own folder, the session's
 * lifecycle and its settings theirs, so the folder tree reads as the architecture
 * (docs/architecture.md). It is a script, not a one-off move, so that it can be run again after
 * other branches have merged: files they add to a moved folder move with it, their imports of
 * moved files are rewritten, and the dependency rules and the folder table follow.
 *
 *   npx tsx scripts/reorganise-folders.ts            (--dry-run: print what it would move and rewrite)
 *
 * It `git mv`s the files, rewrites every relative module specifier of the repository's code (found
 * by the TypeScript compiler) and every mention of a moved path in code, docs and configuration,
 * rewrites dependency-rules.json and the folder table of docs/architecture.md, stages the result,
 * then runs the dependency check. A second run changes nothing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { check } from './check-dependencies.ts';
import { applyMoves, trackedFiles } from './reorganise/apply.ts';
import { rewriteRules, type ForbiddenRule, type RuleChanges } from './reorganise/dependency-rules.ts';
import { applyDocEdits, type DocEdit } from './reorganise/doc-edits.ts';
import { rewriteFolderTable, type TableChanges } from './reorganise/folder-table.ts';
import type { MoveMap } from './reorganise/plan.ts';

/**
 * The layers, bottom up: session-settings (read by every layer from the stores up) < agent (one
 * run of the agent: the driver, the query loop and the recorder they write into) < turn (what
 * starts, resumes, follows and stops a run) < session (what creates, compacts, imports, shows and
 * deletes a session). The recorder, its feed, the lease heartbeat and the stops stay with the
 * agent: background agents and sub-agents write through them too, and the recorder records the
 * query loop's events, so moving them up to the turn would make agent and turn import each other.
 */
const MOVES: MoveMap = {
  files: {
    'functions/agent/turn.ts': 'functions/turn/turn.ts',
    'functions/agent/turn-loop.ts': 'functions/turn/turn-loop.ts',
    'functions/agent/turn-run.ts': 'functions/turn/turn-run.ts',
    'functions/agent/resume.ts': 'functions/turn/resume.ts',
    'functions/agent/subagent-reentry.ts': 'functions/turn/subagent-reentry.ts',
    'functions/agent/crashed-turn.ts': 'functions/turn/crashed-turn.ts',
    'functions/agent/follow-turn.ts': 'functions/turn/follow-turn.ts',
    'functions/agent/interrupt-turn.ts': 'functions/turn/interrupt-turn.ts',
    'functions/agent/session-ops.ts': 'functions/session/session-ops.ts',
    'functions/agent/delete-session.ts': 'functions/session/delete-session.ts',
    'functions/permissions/session-settings.ts': 'functions/session-settings/session-settings.ts',
    // The API function's asynchronous entry: it dispatches to turns, background agents and session deletion alike.
    'functions/agent/async-events.ts': 'functions/handlers/async-events.ts',
    // Tests that sat in test/functions/agent/ but test other folders' files.
    'test/functions/agent/model-call.test.ts': 'test/functions/model/model-call.test.ts',
    'test/functions/agent/model-call-providers.test.ts': 'test/functions/model/model-call-providers.test.ts',
    'test/functions/agent/observed-model-client.test.ts': 'test/functions/model/observed-model-client.test.ts',
    'test/functions/agent/transcript.test.ts': 'test/functions/context/transcript.test.ts',
  },
  folders: {
    'functions/sessions/': 'functions/session/',
    'functions/agent-settings/': 'functions/session-settings/',
    'functions/mcp/': 'functions/session-settings/',
    'functions/environment-settings/': 'functions/session-settings/',
  },
};

/** The files of functions/agent/ that stay there; a file not listed here nor moved is reported, so a file another branch added gets a decision. */
const AGENT_STAYS = [
  'environment-snapshot.ts', 'instructions-block.ts', 'project-context.ts', 'repository-settings-load.ts',
  'agent-driver.ts', 'background-agent.ts', 'background-notifications.ts', 'budget.ts', 'output-recovery.ts', 'query.ts', 'session-head.ts',
  'subagent-log.ts', 'subagent-runner.ts', 'system-prompt.ts', 'turn-deps.ts', 'turn-feed.ts', 'turn-lease.ts', 'turn-recorder.ts', 'turn-stop.ts',
];

const OUTSIDE_TURN = 'api|schedules|github|handlers|workspaces';

const RULES: RuleChanges = {
  // A rule that keeps a folder off the agent keeps it off the turn and the session above it too.
  renames: { sessions: ['session'], agent: ['agent', 'turn'], 'agent-settings': ['session-settings'], mcp: ['session-settings'] },
  upsert: [
    { from: '^functions/session-settings/', to: '^functions/(?!shared/|permissions/|hooks/|outbound/|session-settings/)', why: "a session's settings (permission mode and rules, hooks, MCP servers, custom agents, network) are a schema every layer reads, down to the stores: they build on permissions, hooks and outbound only" },
    { from: '^functions/agent/', to: `^functions/(turn|session|${OUTSIDE_TURN})/`, why: 'one run of the agent (the driver, the query loop, the recorder, sub-agents, background agents) knows nothing of what started it: a turn runs agents, an agent never starts, resumes or follows a turn' },
    { from: '^functions/turn/', to: `^functions/(session|${OUTSIDE_TURN})/`, why: "a turn knows its session through the session's stored record only; creating, compacting, importing, showing and deleting sessions sit above it" },
    { from: '^functions/session/', to: '^functions/(api|schedules|github|handlers)/', why: "a session's lifecycle is called by the API, schedules and GitHub runs, never the reverse" },
  ],
};

const TABLE: TableChanges = {
  removed: ['functions/agent-settings', 'functions/mcp', 'functions/environment-settings', 'functions/sessions'],
  rows: [
    { folder: 'functions/permissions', holds: 'rules, modes, Bash command rules, denial tracking' },
    {
      folder: 'functions/session-settings',
      after: 'functions/permissions',
      holds: "a session's settings (`SessionSettings`: permission mode and rules, hooks, network, MCP servers, custom agents, ToolSearch mode), the MCP server shape (`.mcp.json`, name normalisation, redaction), custom sub-agent definitions, set-up settings and the default registries of set-up steps",
      mayImport: 'only shared, permissions, hooks, outbound',
    },
    { folder: 'functions/agent', holds: 'one run of the agent: the agent driver, the query loop, the recorder every run writes into (session head, event feed, lease heartbeat), stops and budgets, sub-agents, background agents and their notifications, the system prompt, `TurnDeps`' },
    { folder: 'functions/turn', after: 'functions/agent', holds: "a turn's lifecycle: start and continue (`turn.ts`), the run (reload, repair of dangling `tool_use`s, the prompt, the driver), answers to pending permissions, re-running sub-agent calls a dead turn left, crashed turns, following and interrupting a turn" },
    { folder: 'functions/session', after: 'functions/turn', holds: "a session's lifecycle: creation, views, its agents, compaction and import (`session-ops.ts`), deletion" },
    { folder: 'functions/handlers', holds: 'the Lambda entry files (`api.ts`, `cron.ts`, `github-worker.ts`), what the API function does when invoked asynchronously (`async-events.ts`), and the composition roots (`create-deps.ts`, `lambda-deps.ts`), the only place AWS and model clients are built' },
  ],
};

const README_TREE_AGENT = [
  '  agent/            turn engine (lease, heartbeat, recorder), query loop (async generator), continuations, compaction/import ops,',
  '                    budgets, interrupts, session deletion',
].join('\n');

/** The prose the moves make untrue, in the words it is to read after them (docs/architecture.md's diagram, README's tree). */
const DOC_EDITS: DocEdit[] = [
  {
    file: 'docs/architecture.md',
    from: '    engine["Turn engine, stateless: functions/turn/turn.ts<br/>lease + heartbeat; reload session, messages,<br/>ContentReplacementState"]',
    to: '    engine["Turn engine, stateless: functions/turn/turn.ts<br/>lease + heartbeat; reload session, messages,<br/>ContentReplacementState"]\n    lifecycle["Session lifecycle: functions/session/<br/>create, compact, import, delete"]',
  },
  { file: 'docs/architecture.md', from: '  api --> engine', to: '  api --> engine\n  api --> lifecycle' },
  { file: 'docs/architecture.md', from: '  engine <--> ddb', to: '  engine <--> ddb\n  lifecycle <--> ddb' },
  { file: 'docs/turns.md', from: '## The shape of a turn (`functions/agent/`)', to: '## The shape of a turn (`functions/turn/`, `functions/agent/`)' },
  {
    file: 'README.md',
    from: README_TREE_AGENT,
    to: [
      '  turn/             a turn: start and continue (lease, continuation), the run, resume, crashed turns, follow, interrupt',
      '  agent/            one agent run: the driver, the query loop (async generator), the recorder, heartbeat, budgets and stops,',
      '                    sub-agents, background agents',
      '  session/          a session: creation, views, compaction/import ops, deletion',
      '  session-settings/ what a session is set up with: permissions, hooks, network, MCP servers (the .mcp.json shape), custom agents',
    ].join('\n'),
  },
  { file: 'README.md', from: '  mcp/              MCP server settings: the .mcp.json shape, name normalisation, redaction', to: '' },
  { file: 'README.md', from: '  permissions/      rules, modes, denial tracking, session settings', to: '  permissions/      rules, modes, denial tracking' },
  { file: 'README.md', from: '  sessions/ workspaces/  session creation and views; workspace import/export', to: '  workspaces/       workspace import/export, presigned uploads' },
  {
    file: 'README.md',
    from: 'against the layering. Inside `functions/`: `shared` at the bottom, then `hooks` and `permissions`,',
    to: 'against the layering. Inside `functions/`: `shared` at the bottom, then `hooks`, `permissions` and `session-settings`,',
  },
  {
    file: 'README.md',
    from: 'those; the engine, sessions, workspaces and schedules ask for parts of `Deps`; `api` and `handlers`',
    to: 'those; one agent run (`agent`), the turn that starts it (`turn`), the session around them (`session`), workspaces and\nschedules ask for parts of `Deps`; `api` and `handlers`',
  },
];

/** The map and its own test name the old paths on purpose. */
const SELF = ['scripts/reorganise-folders.ts', 'scripts/reorganise/', 'test/scripts/reorganise-folders.test.ts'];

interface Rules {
  roots: string[];
  forbidFileCycles: boolean;
  forbidFolderCycles: boolean;
  forbidden: ForbiddenRule[];
}

const readRules = (root: string): Rules => JSON.parse(readFileSync(path.join(root, 'dependency-rules.json'), 'utf8')) as Rules;

function rewriteFile(root: string, file: string, rewrite: (text: string) => string): boolean {
  const text = readFileSync(path.join(root, file), 'utf8');
  const next = rewrite(text);
  if (next === text) return false;
  writeFileSync(path.join(root, file), next);
  execFileSync('git', ['add', '--', file], { cwd: root });
  return true;
}

function reportUnlisted(root: string): void {
  const unlisted = trackedFiles(root).filter((f) => f.startsWith('functions/agent/') && !MOVES.files[f] && !AGENT_STAYS.includes(f.slice('functions/agent/'.length)));
  for (const f of unlisted) console.log(`not in the move map, stays: ${f} (if it belongs to the turn or the session, add it to MOVES and run again)`);
}

function main(root: string, dryRun: boolean): void {
  const before = check(root, readRules(root)).folders;
  const { moved, edited } = applyMoves(root, MOVES, { dryRun, leave: (f) => SELF.some((s) => f === s || (s.endsWith('/') && f.startsWith(s))) });
  for (const [from, to] of moved) console.log(`${dryRun ? 'would move' : 'moved'} ${from} → ${to}`);
  if (dryRun) for (const file of edited) console.log(`would rewrite ${file}`);
  console.log(`${moved.length} file(s) ${dryRun ? 'to move' : 'moved'}, ${edited.length} file(s) ${dryRun ? 'to rewrite' : 'rewritten'}`);
  if (dryRun) return reportUnlisted(root);
  if (rewriteFile(root, 'dependency-rules.json', (text) => rewriteRules(text, RULES))) console.log('rewrote dependency-rules.json');
  const rules = readRules(root);
  const { problems, folders } = check(root, rules);
  if (rewriteFile(root, 'docs/architecture.md', (text) => rewriteFolderTable(text, TABLE, rules.forbidden, before, folders))) console.log('rewrote the folder table of docs/architecture.md');
  for (const file of [...new Set(DOC_EDITS.map((e) => e.file))]) {
    const report = (e: DocEdit): void => console.log(`${file}: these lines are not there any more, edit by hand:\n${e.from}\n  → ${e.to}`);
    if (rewriteFile(root, file, (text) => applyDocEdits(text, DOC_EDITS.filter((e) => e.file === file), report))) console.log(`rewrote prose in ${file}`);
  }
  reportUnlisted(root);
  if (problems.length > 0) {
    console.error(`dependency check after the moves: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exitCode = 1;
  } else console.log('dependency check after the moves: no cycles, no forbidden imports');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) main(process.cwd(), process.argv.includes('--dry-run'));
