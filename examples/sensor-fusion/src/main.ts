import { runCli } from './cli.js';

// The first SIGINT (Ctrl-C) or SIGTERM stops the run (the sources end, the graph drains, the metrics are
// printed) and the exit code is then 128 + the signal number; a second one exits at once.
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

const exitCode = await runCli(process.argv.slice(2), { log: (line) => console.log(line), error: (line) => console.error(line) }, process.env, stop.signal);
process.exitCode = exitCode === 0 && received !== undefined ? SIGNAL_EXIT_CODES[received] : exitCode;
