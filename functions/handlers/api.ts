import { fileURLToPath } from 'node:url';
import { loadLambdaDeps } from './lambda-deps.ts';
import { createApiHandler } from './create-api-handler.ts';

/** Entry of the API function (Function URL, response streaming, and its own async continuations). */
/** The console's built files ship in `console/` beside the bundle (infra/constructs/turn-engine-function.ts). */
export const handler = createApiHandler({ loadDeps: () => loadLambdaDeps(process.env), consoleDir: fileURLToPath(new URL('./console/', import.meta.url)) });
