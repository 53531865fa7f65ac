/**
 * Runs API examples one after another in this process (`node --import tsx run-api-examples.ts <file>...`) and
 * prints, as its last line, a JSON array of `{ file, error }` for those that threw, rejected or did not settle within
 * EXAMPLE_TIMEOUT_MS. One process for all keeps the docs test's cost to one Node start-up.
 */
import { pathToFileURL } from 'node:url';

const EXAMPLE_TIMEOUT_MS = 30_000;

const failures: { file: string; error: string }[] = [];
for (const file of process.argv.slice(2)) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${EXAMPLE_TIMEOUT_MS} ms`)), EXAMPLE_TIMEOUT_MS);
  });
  try {
    await Promise.race([import(pathToFileURL(file).href), timeout]);
  } catch (error) {
    failures.push({ file, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  } finally {
    clearTimeout(timer);
  }
}
console.log(JSON.stringify(failures));
process.exit(0);
