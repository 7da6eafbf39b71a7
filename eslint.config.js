// Lint: recommended JS + typescript-eslint rules, plus the layer rule that keeps src/domain pure.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const impureModules = [
  'fastify',
  'fastify-plugin',
  'kysely',
  'pg',
  'pino',
  '@electric-sql/pglite',
  'kysely-pglite-dialect',
  'nodemailer',
  '@sinclair/typebox',
  '@fastify/*',
  'node:*',
  'fs',
  'path',
  'crypto',
  'os',
  'child_process',
]

export default tseslint.config(
  { ignores: ['dist/**', 'clients/node/dist/**', 'node_modules/**', '.data/**', 'coverage/**', 'bench/.dev/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Migrations are frozen in time and must not know the app's schema type (Kysely docs): Kysely<any>.
    files: ['migrations/**/*.ts', 'src/db/migrate.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: impureModules, message: 'src/domain is pure: no I/O, framework, database or logging imports.' }] },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'src/domain must not read the environment.' },
        { name: 'fetch', message: 'src/domain does no I/O.' },
        { name: 'setTimeout', message: 'src/domain has no clock.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'src/domain has no clock: pass time in.' },
        { object: 'Math', property: 'random', message: 'src/domain has no randomness: pass ids in.' },
        { object: 'crypto', property: 'randomUUID', message: 'src/domain has no randomness: pass ids in.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'src/domain has no clock: pass time in.' },
      ],
    },
  },
  {
    // The browser SDK renders server data into merchant pages under a strict CSP: text and DOM APIs only,
    // no markup parsing, no inline styles, no code from strings (sdk/src/dom.ts, docs/sdk.md).
    files: ['sdk/src/**/*.ts'],
    rules: {
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Render with textContent and DOM APIs: never parse server data as HTML.' },
        { property: 'outerHTML', message: 'Render with textContent and DOM APIs: never parse server data as HTML.' },
        { property: 'insertAdjacentHTML', message: 'Render with textContent and DOM APIs: never parse server data as HTML.' },
        { property: 'createContextualFragment', message: 'Render with textContent and DOM APIs: never parse server data as HTML.' },
        { object: 'document', property: 'write', message: 'Never document.write.' },
        { property: 'style', message: 'No inline styles (CSP style-src): use classes in the constructed stylesheet (sdk/src/styles.ts).' },
        { property: 'cssText', message: 'No inline styles (CSP style-src): use the constructed stylesheet.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='setAttribute'][arguments.0.value=/^(style|on)/]",
          message: 'No style or on* attributes: constructed stylesheets and addEventListener only.',
        },
        {
          selector: "CallExpression[callee.property.name='createElement'][arguments.0.value=/^(style|script|iframe)$/]",
          message: 'No <style>, <script> or <iframe> elements in the widget.',
        },
      ],
    },
  },
  {
    // The Hub's pages render through Preact (text, never markup) under a CSP without 'unsafe-inline'.
    files: ['hub/src/**/*.{ts,tsx}'],
    rules: {
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Nothing is parsed as HTML in the Hub.' },
        { property: 'outerHTML', message: 'Nothing is parsed as HTML in the Hub.' },
        { property: 'insertAdjacentHTML', message: 'Nothing is parsed as HTML in the Hub.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']", message: 'Nothing is parsed as HTML in the Hub.' },
        { selector: "JSXAttribute[name.name='style']", message: 'No inline styles (CSP style-src): use hub/src/styles.css.' },
      ],
    },
  },
  {
    files: ['sdk/*.mjs', 'scripts/*.mjs', 'hub/*.mjs', 'clients/node/scripts/*.mjs', 'clients/node/examples/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
  {
    // The demo shop's browser scripts: plain scripts under a strict CSP, with the SDK's window.Canopy.
    files: ['examples/shop/public/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { document: 'readonly', location: 'readonly', fetch: 'readonly', Intl: 'readonly', Canopy: 'readonly' },
    },
  },
  // Relative imports must stay inside src/domain (one rule per folder depth).
  {
    files: ['src/domain/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: impureModules, message: 'src/domain is pure: no I/O, framework, database or logging imports.' },
            { regex: '^\\.\\./', message: 'src/domain must not import other layers.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/*/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: impureModules, message: 'src/domain is pure: no I/O, framework, database or logging imports.' },
            { regex: '^\\.\\./\\.\\./', message: 'src/domain must not import other layers.' },
          ],
        },
      ],
    },
  },
)
