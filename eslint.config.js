import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'src/db/migrations/**', 'coverage/**', '**/.*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // ingestion and file names deliberately match control characters to strip them
      'no-control-regex': 'off',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Read configuration through src/config.ts' },
      ],
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/routes.js', '**/routes'], message: 'Nothing imports routes except app.ts' }] }],
    },
  },
  { files: ['src/config.ts', 'test/**', 'bench/**', 'src/cli.ts', '*.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['src/app.ts'], rules: { 'no-restricted-imports': 'off' } },
);
