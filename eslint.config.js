// The linter, run by `npm run lint` (after Prettier, which owns the layout) and by .ci/run before the tests.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'bench/results/', 'client/generated/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  prettier,
  {
    rules: {
      // `_`-prefixed names are deliberately unused (a parameter a signature requires, a member a rest pattern drops).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  // The browser side of /docs (public/docs/): a plain script in the page, after Swagger UI's bundle.
  { files: ['public/**/*.js'], languageOptions: { globals: { ...globals.browser, SwaggerUIBundle: 'readonly' }, sourceType: 'script' } },
  // Plain JavaScript run by Node: the command's launcher.
  { files: ['bin/**/*.js'], languageOptions: { globals: globals.node } },
);
