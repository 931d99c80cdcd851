import { loadLambdaDeps } from '../deps/lambda-deps.ts';
import { once } from './once.ts';
import { runScheduledTurn } from './scheduled-turn.ts';

const deps = once(() => loadLambdaDeps(process.env));

/** Entry of the cron function, the target of every EventBridge Scheduler schedule. */
export const handler = async (event: unknown) => runScheduledTurn(await deps(), event);
