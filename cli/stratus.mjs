#!/usr/bin/env node
// The CLI from the repository, `npm run -s stratus -- …` (README: the CLI): TypeScript, run through tsx like the rest of the repo.
import { register } from 'tsx/esm/api';

// npm runs a script in the package's folder; the paths a user types (`new --from ./x`, `pull ./out`)
// mean the folder they typed them in, which npm passes as INIT_CWD.
if (process.env.npm_lifecycle_event === 'stratus' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

register();
await import('./main.ts');
