// @ts-check
/**
 * A TypeDoc plugin with two markdown rules for the API reference:
 * - the "On this page" entry of a heading keeps its inline code. TypeDoc builds an entry's text from the heading's
 *   plain-text tokens only, so "What `compile()` plans" became "What  plans". Each inline-code token of a heading
 *   gets a text child holding its code: the entry reads the code, the page still renders it as code (the code
 *   renderer reads the token's own content);
 * - no fuzzy links: a file name in prose (`NANOVDB-FORMAT.md`, `run.sh`) is not turned into `http://NANOVDB-FORMAT.md`;
 *   links with a scheme (`https://...`) still are.
 * @param {import('typedoc').Application} app
 */
export function load(app) {
  // set once the configuration was read (reading it resets the options a plugin set while loading)
  app.on('bootstrapEnd', () => app.options.setValue('markdownItLoader', (/** @type {any} */ parser) => {
    parser.linkify.set({ fuzzyLink: false });
    parser.core.ruler.push('hs-heading-code-text', (/** @type {any} */ state) => {
      const tokens = state.tokens;
      for (let i = 0; i + 1 < tokens.length; i++) {
        if (tokens[i].type !== 'heading_open') continue;
        for (const child of tokens[i + 1].children ?? []) {
          if (child.type === 'code_inline' && child.children === null) {
            const text = new state.Token('text', '', 0);
            text.content = child.content;
            child.children = [text];
          }
        }
      }
    });
  }));
}
