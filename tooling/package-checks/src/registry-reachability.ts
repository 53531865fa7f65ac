import { execFile } from 'node:child_process';

/** Whether the package registry npm is configured for answers, and why not when it does not. */
export type RegistryReachability = { readonly reachable: true } | { readonly reachable: false; readonly reason: string };

/**
 * Asks the configured registry for a ping (`npm ping`), bounded by `timeoutMs`. Never throws: an
 * unreachable registry (no network, a proxy refusing) is a `reachable: false` with npm's first line.
 */
export function checkRegistry(timeoutMs = 15_000): Promise<RegistryReachability> {
  return new Promise((resolve) => {
    execFile('npm', ['ping', `--fetch-timeout=${timeoutMs}`, '--fetch-retries=0'], { timeout: timeoutMs + 5_000 }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve({ reachable: true });
        return;
      }
      const detail = String(stderr).split('\n').find((line) => /error|ERR/i.test(line)) ?? error.message;
      resolve({ reachable: false, reason: detail.trim() });
    });
  });
}
