import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', 'coverage/**', 'test/nest12/node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The libraries' sources (#44): no `any` (tests and benches may read JSON loosely), at most 6
  // parameters (a part with more is a provider's job), and no function longer than 60 lines.
  {
    files: ['libs/*/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'max-params': ['error', 6],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      // One lib reads another through its public entry only (the CLI and the dashboard included):
      // `/internal` entries are for the lib's own tests and benches.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@holdfast/*/internal'], message: "Use the lib's public entry (its status exports)." },
          ],
        },
      ],
    },
  },
  // The migrations ship in @holdfast/cli: they build their DDL from the libs' public entries
  // (`<LIB>_TABLES`, `INBOX_TABLE_UPGRADES`), as an application's own migration tool would.
  {
    files: ['migrations/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@holdfast/*/internal'],
              message: "Use the lib's public entry (<LIB>_TABLES, INBOX_TABLE_UPGRADES).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
  },
);
