import { loadLambdaDeps } from './lambda-deps.ts';
import { createApiHandler } from './create-api-handler.ts';

/** Entry of the API function (Function URL, response streaming, and its own async continuations). */
export const handler = createApiHandler({ loadDeps: () => loadLambdaDeps(process.env) });
