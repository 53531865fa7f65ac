import { processLines } from '@hs/cli-options';
import { runCli } from './cli.js';

// The first SIGINT (Ctrl-C) or SIGTERM stops the run: the source ends, the graph drains, the output
// directory's lock is released and what was written is printed; the exit code is then 128 + the signal
// number. A second one exits at once (the lock file is still removed, by the process's 'exit' event).
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
const stop = new AbortController();
let received: keyof typeof SIGNAL_EXIT_CODES | undefined;
for (const name of ['SIGINT', 'SIGTERM'] as const) {
  process.on(name, () => {
    if (received !== undefined) process.exit(SIGNAL_EXIT_CODES[name]);
    received = name;
    console.error(`${name}: stopping the run (draining the graph); send it again to exit at once`);
    stop.abort();
  });
}

// A reader that goes away (`node dist/main.js | head`) ends the process quietly with the code so far.
const exitCode = await runCli(process.argv.slice(2), processLines(), process.env, stop.signal);
process.exitCode = exitCode === 0 && received !== undefined ? SIGNAL_EXIT_CODES[received] : exitCode;
