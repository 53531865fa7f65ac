/**
 * The install sections of the repository README that CI runs. Each user's section marks its install
 * command and the program that shows it works, each on the line before its fence:
 *
 * ```md
 * <!-- readme-install -->
 * ```sh
 * npm install @hs/nanovdb-mr
 * ```
 * <!-- readme-install-example prints="grid round trip" -->
 * ```js
 * ...
 * ```
 * ```
 *
 * The check installs the packages the command names, from the packed tarballs (offline), and runs the
 * program that follows in that project.
 */

/** One marked install command and the program after it. */
export interface ReadmeInstall {
  /** The `### ` heading the command sits under. */
  readonly section: string;
  /** The command as the README writes it: `npm install @hs/nanovdb-mr`. */
  readonly command: string;
  /** The hs packages it installs. */
  readonly packages: readonly string[];
  /** The ES module source of the program after it. */
  readonly code: string;
  /** Text the program's standard output must contain, or null. */
  readonly prints: string | null;
  /** 1-based line of the install marker. */
  readonly line: number;
}

const INSTALL = /^<!--\s*readme-install\s*-->\s*$/;
const EXAMPLE = /^<!--\s*readme-install-example(?:\s+prints="([^"]*)")?\s*-->\s*$/;
const COMMAND = /^npm install((?:\s+@hs\/[a-z0-9-]+)+)\s*$/;

/** The fenced block opening at `lines[open]` with `language`: its text and the line after its closing fence. */
function fence(lines: readonly string[], open: number, language: string, what: string): { text: string; next: number } {
  if (lines[open] !== '```' + language) throw new Error(`line ${open}: a ${what} marker must be followed directly by a \`\`\`${language} fence`);
  let close = open + 1;
  while (close < lines.length && lines[close] !== '```') close++;
  if (close >= lines.length) throw new Error(`line ${open + 1}: the ${what}'s fence is never closed`);
  return { text: lines.slice(open + 1, close).join('\n'), next: close + 1 };
}

/**
 * Extracts every marked install command with its program, in order.
 * @throws Error naming the line when a marker is not followed by its fence, the command is not one
 * `npm install` of hs packages, or no marked program follows it before the next command or heading.
 */
export function extractReadmeInstalls(markdown: string): ReadmeInstall[] {
  const lines = markdown.split(/\r?\n/);
  const installs: ReadmeInstall[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('### ')) section = lines[i]!.slice(4).trim();
    if (!INSTALL.test(lines[i]!)) continue;
    const command = fence(lines, i + 1, 'sh', 'readme-install');
    const parsed = COMMAND.exec(command.text.trim());
    if (parsed === null) throw new Error(`line ${i + 2}: a readme-install command is one \`npm install @hs/...\` line, not ${JSON.stringify(command.text)}`);
    let j = command.next;
    while (j < lines.length && !EXAMPLE.test(lines[j]!) && !INSTALL.test(lines[j]!) && !lines[j]!.startsWith('#')) j++;
    const marker = j < lines.length ? EXAMPLE.exec(lines[j]!) : null;
    if (marker === null) throw new Error(`line ${i + 1}: the install command has no readme-install-example program after it`);
    const program = fence(lines, j + 1, 'js', 'readme-install-example');
    installs.push({ section, command: command.text.trim(), packages: parsed[1]!.trim().split(/\s+/), code: `${program.text}\n`, prints: marker[1] ?? null, line: i + 1 });
    i = program.next - 1;
  }
  return installs;
}

const TSCONFIG = /^<!--\s*readme-tsconfig\s*-->\s*$/;

/**
 * The `compilerOptions` of the README's marked tsconfig (`<!-- readme-tsconfig -->` on the line before a ```json
 * fence): the TypeScript settings the README tells users to set, which the fresh-project checks compile with.
 * @throws Error when the README has no such block, or more than one, or it is not JSON with `compilerOptions`.
 */
export function readmeCompilerOptions(markdown: string): Readonly<Record<string, unknown>> {
  const lines = markdown.split(/\r?\n/);
  const markers = lines.flatMap((line, i) => (TSCONFIG.test(line) ? [i] : []));
  if (markers.length !== 1) throw new Error(`the README needs exactly one readme-tsconfig block, found ${markers.length}`);
  const block = fence(lines, (markers[0] as number) + 1, 'json', 'readme-tsconfig');
  const parsed = JSON.parse(block.text) as { compilerOptions?: unknown };
  if (typeof parsed.compilerOptions !== 'object' || parsed.compilerOptions === null) throw new Error('the readme-tsconfig block has no compilerOptions object');
  return parsed.compilerOptions as Record<string, unknown>;
}
