import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const docsDir = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(docsDir, '..');

it('builds the API reference from typedoc.json with zero warnings (a missing doc comment fails)', async () => {
  const out = mkdtempSync(join(tmpdir(), 'hs-api-'));
  try {
    const { code, output } = await new Promise<{ code: number; output: string }>((done) => {
      execFile(join(docsDir, 'node_modules', '.bin', 'typedoc'), ['--out', out], { cwd: root, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } }, (error, stdout, stderr) =>
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }),
      );
    });
    const problems = output.split('\n').filter((line) => /\[(warning|error)\]/.test(line));
    expect(problems).toEqual([]);
    expect(code).toBe(0);
    // a type of one package used in another links to its page (typedoc.json maps @hs/* to the sources)
    expect(unlinkedTypes(out)).toEqual([]);
    // an "On this page" entry reads as its heading, inline code included (docs/typedoc/heading-code-text.mjs)
    expect(tableOfContentsMismatches(out)).toEqual([]);
    // a link to a markdown file opens its rendered page (typedoc.json projectDocuments), not the raw file
    expect(rawMarkdownLinks(out)).toEqual([]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

/** `folder/page: Name` for each use of a documented hs type that the page shows as plain text instead of a link. */
function unlinkedTypes(site: string): string[] {
  const folders = ['classes', 'interfaces', 'types', 'enums'];
  const documented = new Set(folders.flatMap((f) => readdirSync(join(site, f)).map((page) => page.replace(/\.html$/, '').split('.').at(-1) ?? '')));
  const found: string[] = [];
  for (const folder of [...folders, 'functions', 'variables']) {
    for (const page of readdirSync(join(site, folder))) {
      for (const [, name] of readFileSync(join(site, folder, page), 'utf8').matchAll(/<span class="tsd-signature-type">([A-Za-z]\w*)<\/span>/g)) {
        // a name that is also a global (Event) is the built-in one here, e.g. in EventEmitter's inherited members
        if (documented.has(name as string) && !(name as string in globalThis)) found.push(`${folder}/${page}: ${name}`);
      }
    }
  }
  return [...new Set(found)];
}

/** `page: entry != heading` for each "On this page" entry whose text differs from its heading's text. */
function tableOfContentsMismatches(site: string): string[] {
  const plain = (html: string): string => html.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
  const found: string[] = [];
  for (const folder of ['documents', 'modules']) {
    for (const page of readdirSync(join(site, folder))) {
      const html = readFileSync(join(site, folder, page), 'utf8');
      const headings = new Map([...html.matchAll(/<h[1-6] id="([^"]+)" class="tsd-anchor-link">(.*?)<a href="#/g)].map(([, id, inner]) => [id, plain(inner as string)]));
      for (const [, id, text] of html.matchAll(/<a href="#([^"]+)"><span>([^<]*)<\/span><\/a>/g)) {
        const heading = headings.get(id as string);
        if (heading !== undefined && heading !== plain(text as string)) found.push(`${folder}/${page}: '${text}' != '${heading}'`);
      }
    }
  }
  return found;
}

/** `page: href` for each link of the site that points at a copied markdown file instead of a rendered page. */
function rawMarkdownLinks(site: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.html')) for (const [, href] of readFileSync(path, 'utf8').matchAll(/href="([^"#]*\.md)(?:#[^"]*)?"/g)) found.push(`${path.slice(site.length + 1)}: ${href}`);
    }
  };
  walk(site);
  return found;
}

it('puts every guide on the site (typedoc.json projectDocuments)', () => {
  const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { projectDocuments: string[] };
  const guides = readdirSync(join(docsDir, 'guides')).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`);
  expect(guides.filter((g) => !config.projectDocuments.includes(g)), 'add them to "projectDocuments" in typedoc.json').toEqual([]);
});
