// `node --import ./register.mjs …`: the conformance suite's `fs` imports get `globSync` on
// Node 20 (added to `fs` in Node 22), through a resolve hook; other modules are untouched.
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
