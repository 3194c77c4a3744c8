import path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

/** The `atrium/module-graph` lint rule (eslint.config.js) that keeps the module graph acyclic. */
const config = ((await import(new URL('../eslint.config.js', import.meta.url).href)) as { default: Array<{ plugins?: Record<string, unknown> }> }).default;
const plugin = config.find((c) => c.plugins?.atrium)!.plugins!.atrium;
const ROOT = path.join(import.meta.dirname, '..');

function problems(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        plugins: { atrium: plugin as never },
        languageOptions: { parser: tseslint.parser as never },
        rules: { 'atrium/module-graph': 'error' },
      },
    ],
    { filename: path.join(ROOT, file) },
  );
  return messages.map((m) => m.message);
}

describe('module graph rule', () => {
  it('lets a module import modules before it in the order', () => {
    expect(problems('src/modules/chat/turns.ts', "import { PlusService } from '../plus/service.js';\nimport { x } from './repo.js';")).toEqual([]);
    expect(problems('src/modules/plus/service.ts', "import type { ModelsService } from '../models/service.js';")).toEqual([]);
  });

  it('refuses an import back up the order, so no cycle can form', () => {
    expect(problems('src/modules/plus/service.ts', "import type { TurnService } from '../chat/turns.js';")).toEqual([
      expect.stringContaining('modules/plus may not import modules/chat'),
    ]);
    expect(problems('src/modules/models/routes.ts', "export { x } from '../workspaces/schema.js';")).toHaveLength(1);
  });

  it('refuses the Services bag in a module and modules in the leaf layers', () => {
    expect(problems('src/modules/teams/routes.ts', "import type { Services } from '../../services.js';")).toEqual([
      expect.stringContaining('never the Services bag'),
    ]);
    expect(problems('src/retrieval/pack.ts', "import type { Principal } from '../modules/teams/service.js';")).toEqual([
      expect.stringContaining('retrieval/ knows nothing'),
    ]);
    expect(problems('src/providers/openai.ts', "import { x } from '../http/sse.js';")).toHaveLength(1);
    expect(problems('src/policy/plus.ts', "import type { PlusRow } from '../modules/plus/repo.js';")).toEqual([
      expect.stringContaining('policy/ knows nothing'),
    ]);
    expect(problems('src/modules/chat/service.ts', "import { threadScope } from '../../policy/index.js';")).toEqual([]);
  });

  it('asks for a new module to be placed in the order', () => {
    expect(problems('src/modules/billing/service.ts', "import { x } from '../chat/service.js';")).toEqual([
      expect.stringContaining('modules/billing is not in MODULE_ORDER'),
    ]);
  });
});
