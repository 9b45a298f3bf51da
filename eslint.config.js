// The linter, run by `npm run lint` (after Prettier, which owns the layout) and by .ci/run before the tests.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'client/dist/', 'bench/results/', 'client/generated/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  prettier,
  // Prettier owns the layout, at 120 columns (.prettierrc.json), but does not wrap comments: max-len warns of a line
  // past 120 that is not a string, template, URL or regular expression. After `prettier`, which turns it off.
  {
    rules: {
      'max-len': [
        'warn',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
    },
  },
  {
    rules: {
      // `_`-prefixed names are deliberately unused (a parameter a signature requires, a member a rest pattern drops).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  // The rules that need the types: a promise nobody waits for, or one handed where nothing waits for it,
  // loses its failure. The sizes: a file read whole, a function read at once. They are signals, not gates (warnings):
  // a file or function near them is split by its meaning, never squeezed onto fewer, longer lines.
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'max-lines': ['warn', { max: 300 }],
      'max-lines-per-function': ['warn', { max: 50 }],
    },
  },
  // Exceptions, each with its reason.
  {
    // A test file's `describe` callback is a list of cases, each read alone (the cases are short);
    // counting the list as one function would split suites by size rather than by subject.
    files: ['test/**/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // The browser side of /docs (public/docs/): a plain script in the page, after Swagger UI's bundle.
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { ...globals.browser, SwaggerUIBundle: 'readonly' }, sourceType: 'script' },
  },
  // Plain JavaScript run by Node: the command's launcher, and the smoke that CI runs after a production install.
  { files: ['bin/**/*.js', 'scripts/**/*.mjs'], languageOptions: { globals: globals.node } },
);
