import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const SERVICES = ['ingest', 'consumer', 'query'];
const DOMAIN_MODULES = ['budgets', 'pricing', 'records', 'usage', 'webhooks'];

/**
 * Outside a domain module, only its index.ts: a file inside it is not part of what it offers. Inside
 * services/domain a sibling module is also reached as `../pricing/...`; `schemas/records/` is no module.
 */
const deepDomainImports = (except) =>
  DOMAIN_MODULES.filter((module) => module !== except).map((module) => ({
    regex: except ? `(^\\.\\./|/domain/)${module}/(?!index\\.ts$)` : `(^|/)domain/${module}/(?!index\\.ts$)`,
    message: `import services/domain/${module} through its index.ts, not a file inside it`,
  }));

/** A service may import services/shared and itself, never another service (they deploy apart). */
const serviceBoundaries = SERVICES.map((service) => ({
  files: [`services/${service}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...SERVICES.filter((other) => other !== service).map((other) => ({
            group: [`**/${other}/*`, `**/${other}`],
            message: `services/${service} must not import services/${other}: share through services/shared or a schema`,
          })),
          ...deepDomainImports(),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'clients/typescript/dist/**', 'data/**', '.local/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Every file of the repository: the domain modules are imported through their index.ts.
    files: ['**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: deepDomainImports() }] },
  },
  ...DOMAIN_MODULES.map((module) => ({
    // A domain module imports no service, and the other modules through their index.ts.
    files: [`services/domain/${module}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: SERVICES.map((s) => `**/${s}/*`), message: 'services/domain imports no service' },
            ...deepDomainImports(module),
          ],
        },
      ],
    },
  })),
  {
    files: ['services/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: SERVICES.map((s) => `**/${s}/*`),
              message: 'services/shared holds primitives only and imports no service',
            },
            ...deepDomainImports(),
          ],
        },
      ],
    },
  },
  ...serviceBoundaries,
  {
    // The schemas are the leaf every service builds on: what they need (the pricing terms, the request
    // dialect) lives in schemas/, and services import it from there, never the other way round.
    files: ['schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/services/**', '**/services'],
              message: 'schemas/ is a leaf: it imports nothing from services/',
            },
          ],
        },
      ],
    },
  },
  {
    // The dashboard's page runs in the browser, as ES modules served without a build.
    files: ['services/query/dashboard/web/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
);
