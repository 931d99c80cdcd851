import { loadLambdaDeps } from '../deps/lambda-deps.ts';
import { continueTurnNotImplemented } from './continue-turn.ts';
import { createApiHandler } from './create-api-handler.ts';

/** Entry of the API function (Function URL, response streaming). */
export const handler = createApiHandler({ loadDeps: () => loadLambdaDeps(process.env), continueTurn: continueTurnNotImplemented });
