import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'artifacts/**', 'bench/**/*.js', 'scripts/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // A feature adds its event kinds and task facts to state's open interfaces by extending them (src/*/events.ts, facts.ts).
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    files: ['bin/**/*.mjs', '.ci/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
  },
  {
    // The dashboard's client: plain browser JS modules, served as is.
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'fetch',
          'EventSource',
          'Node',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'console',
          'AbortController',
          'DOMException',
          'URL',
          'history',
          'sessionStorage',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
);
