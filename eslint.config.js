// Type-aware lint: the rules that matter most here are the promise rules, because a
// promise nobody awaits is a bug waiting for a stop button (CONTRIBUTING.md, "Conventions").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'workspace/**', 'coverage/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // vitest's asymmetric matchers (expect.stringContaining…) are typed `any` by design.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off', '@typescript-eslint/no-unsafe-argument': 'off' },
  },
  {
    // Connectors ask the session layer (src/sessions/thread-records.ts and the SessionManager)
    // and never reach the store: its keys and records can then change without a connector knowing.
    files: ['connectors/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/store/**', '../../src/store/*', '../../../src/store/*'],
              message:
                'Connectors do not reach the store: ask the session layer (src/sessions/thread-records.ts, the SessionManager), which re-exports the types a connector needs.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JavaScript for Node (bin/start.mjs, which runs before any build; a test preload):
    // tsc checks it (checkJs), names included, so ESLint's own undefined-name rule would only
    // repeat it without Node's globals, as typescript-eslint advises for TypeScript files.
    files: ['**/*.mjs'],
    rules: { 'no-undef': 'off' },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
