import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The module graph, acyclic by construction: a feature module (src/modules/<name>) may import
 * only modules listed BEFORE it here. Services receive each other through constructors in the
 * same order (src/services.ts); a new module must be placed in this list.
 */
const MODULE_ORDER = [
  'audit',
  'teams',
  'models',
  'mcp',
  'workspaces',
  'prompt-logs',
  'embeddings',
  'plus',
  'usage',
  'chat',
  'openai-compat',
  'retention',
  'scim',
];
/** Layers that know nothing of the feature modules or HTTP (policy/: the rules, which modules import). */
const LEAF_LAYERS = ['providers', 'ingest', 'retrieval', 'db', 'security', 'policy'];

const srcPart = (file) => {
  const parts = path.normalize(file).split(path.sep);
  const i = parts.lastIndexOf('src');
  return i < 0 ? null : parts.slice(i + 1);
};

const moduleGraph = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      order:
        'modules/{{from}} may not import modules/{{to}}: a module imports only modules listed before it in MODULE_ORDER (eslint.config.js), which keeps the graph acyclic',
      unknown: 'modules/{{name}} is not in MODULE_ORDER (eslint.config.js): place it after the modules it uses',
      bag: 'modules get the services they use through constructors or route options, never the Services bag (services.ts)',
      leaf: '{{from}}/ knows nothing of modules or HTTP: pass what it needs in as plain values',
    },
  },
  create(context) {
    const from = srcPart(context.filename);
    if (!from || from.length < 2) return {};
    const fromModule = from[0] === 'modules' ? from[1] : null;
    const check = (node) => {
      const spec = node.source && node.source.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const to = srcPart(path.resolve(path.dirname(context.filename), spec));
      if (!to) return;
      if (fromModule) {
        if (!MODULE_ORDER.includes(fromModule)) return context.report({ node, messageId: 'unknown', data: { name: fromModule } });
        if (to.length === 1 && to[0] === 'services.js') return context.report({ node, messageId: 'bag' });
        if (to[0] === 'modules' && to[1] !== fromModule) {
          if (!MODULE_ORDER.includes(to[1])) return context.report({ node, messageId: 'unknown', data: { name: to[1] } });
          if (MODULE_ORDER.indexOf(to[1]) > MODULE_ORDER.indexOf(fromModule))
            context.report({ node, messageId: 'order', data: { from: fromModule, to: to[1] } });
        }
      } else if (LEAF_LAYERS.includes(from[0]) && (to[0] === 'modules' || to[0] === 'http' || to[0] === 'services.js')) {
        context.report({ node, messageId: 'leaf', data: { from: from[0] } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'src/db/migrations/**', 'coverage/**', '**/.*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
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
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/routes.js', '**/routes'], message: 'Nothing imports routes except src/routing.ts' }] }],
    },
  },
  { files: ['src/**/*.ts'], plugins: { atrium: { rules: { 'module-graph': moduleGraph } } }, rules: { 'atrium/module-graph': 'error' } },
  { files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**', 'src/cli.ts', '*.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['src/routing.ts'], rules: { 'no-restricted-imports': 'off' } },
  // The service worker runs in its own scope; the build fills in __SHELL__ (web/vite.config.mjs).
  {
    files: ['web/service-worker.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { self: 'readonly', caches: 'readonly', fetch: 'readonly', Response: 'readonly', URL: 'readonly', __SHELL__: 'readonly' },
    },
  },
);
