#!/usr/bin/env node
import { runCli } from './cli';

// Ctrl-C ends streaming commands cleanly (they print where to resume); a second Ctrl-C exits at once.
const abort = new AbortController();
process.once('SIGINT', () => {
  abort.abort();
  process.once('SIGINT', () => process.exit(130));
});

runCli(process.argv.slice(2), {
  env: process.env,
  io: { out: (text) => process.stdout.write(`${text}\n`), err: (text) => process.stderr.write(`${text}\n`) },
  signal: abort.signal,
}).then((code) => {
  process.exitCode = code;
});
