/**
 * Keeps the layering rules of docs (conventions, "Layout") true: src/protocol, src/policy and src/ui are pure (no
 * Node I/O modules), and host code never imports capsule code or the reverse. Test files are not shipped,
 * so they are outside the purity rule (the vector tests read their JSON with node:fs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** Every module specifier in static imports/exports, side-effect imports, dynamic import() and require(). */
function specifiers(code: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

const FORBIDDEN_IN_PURE = /^(node:)?(fs|fs\/promises|net|child_process)$/;

function isTest(file: string): boolean {
  return /\.test\.[mc]?[tj]s$/.test(file);
}

test('the specifier scanner finds every import form (so the checks below cannot pass vacuously)', () => {
  const code = [
    "import { a } from 'node:fs';",
    "import type { B } from './b.ts';",
    "import * as c from \"net\";",
    "export { d } from '../capsule/d.ts';",
    "import 'node:child_process';",
    "const e = await import('fs/promises');",
    "import {\n  f,\n  g,\n} from '../host/f.ts';",
  ].join('\n');
  assert.deepEqual(specifiers(code).sort(), ['../capsule/d.ts', '../host/f.ts', './b.ts', 'fs/promises', 'net', 'node:child_process', 'node:fs'].sort());
  for (const bad of ['node:fs', 'fs', 'fs/promises', 'node:net', 'net', 'child_process', 'node:child_process']) {
    assert.ok(FORBIDDEN_IN_PURE.test(bad), bad);
  }
  for (const ok of ['node:path', 'node:crypto', './fs.ts', 'fast-check']) assert.ok(!FORBIDDEN_IN_PURE.test(ok), ok);
});

test('src/protocol, src/policy and src/ui import no node:fs, node:net or node:child_process', () => {
  const files = ['protocol', 'policy', 'ui'].flatMap((d) => sourceFiles(join(src, d))).filter((f) => !isTest(f));
  assert.ok(files.some((f) => f.endsWith(join('protocol', 'decoder.ts'))), 'the protocol sources were found');
  const offences: string[] = [];
  for (const f of files) {
    for (const s of specifiers(readFileSync(f, 'utf8'))) {
      if (FORBIDDEN_IN_PURE.test(s)) offences.push(`${relative(root, f)} imports ${s}`);
    }
  }
  assert.deepEqual(offences, [], 'pure modules must leave I/O to their callers');
});

test('src/host never imports src/capsule, and src/capsule never imports src/host', () => {
  const offences: string[] = [];
  for (const [from, to] of [
    ['host', 'capsule'],
    ['capsule', 'host'],
  ] as const) {
    const forbidden = join(src, to) + sep;
    for (const f of sourceFiles(join(src, from))) {
      for (const s of specifiers(readFileSync(f, 'utf8'))) {
        if (!s.startsWith('.')) continue;
        const target = resolve(dirname(f), s);
        if (target.startsWith(forbidden) || target === join(src, to)) offences.push(`${relative(root, f)} imports ${s}`);
      }
    }
  }
  assert.deepEqual(offences, []);
});

/**
 * Specifiers of static imports and re-exports (what loads when the module loads), type imports excluded,
 * and packages loaded with a require function from createRequire at the top level (`createRequire(...)('x')`,
 * or a `require...('x')` call on a line of its own statement: how src/ loads CommonJS packages).
 */
function staticSpecifiers(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/^(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!);
  for (const m of code.matchAll(/^import\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!);
  for (const m of code.matchAll(/^(?:export\s+)?const\s[^=]*=\s*(?:createRequire\([^)]*\)|require\w*)\(\s*['"]([^'"]+)['"]\s*\)/gm)) out.push(m[1]!);
  return out;
}

/** Every module a file loads statically, followed through relative imports; packages listed by name. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const s of staticSpecifiers(readFileSync(file, 'utf8'))) {
      if (s.startsWith('.')) walk(resolve(dirname(file), s));
      else seen.add(s);
    }
  };
  walk(entry);
  return seen;
}

test('`jackin` loads the attached session, doctor and the `open` package only when a command needs them', () => {
  // Start-up time of every `jackin export`, `ls` or `--help`: these modules were a third of it.
  assert.deepEqual(staticSpecifiers("import { a } from './a.ts';\nimport type { B } from './b.ts';\nconst c = await import('./c.ts');\nimport 'node:fs';"), ['./a.ts', 'node:fs']);
  assert.deepEqual(staticSpecifiers("const x = createRequire(import.meta.url)('x') as X;\nconst { Y } = requireCjs('@s/y') as typeof Y;\nexport const { Z } = createRequire(u)('z');"), ['x', '@s/y', 'z']);
  const graph = staticGraph(join(src, 'cli', 'jackin.ts'));
  assert.ok(graph.has(join(src, 'host', 'export', 'export-client.ts')), 'the graph follows relative imports');
  assert.ok(graph.has('commander'), 'the graph lists packages');
  const lazy = ['host/session/attach.ts', 'host/terminal/terminal.ts', 'host/instances/doctor.ts', 'host/paste/paste-feature.ts', 'host/links/link-feature.ts', 'host/export/export-feature.ts', 'host/copy/copy-feature.ts', 'host/terminal/terminal-filter/filter.ts'].map((p) => join(src, ...p.split('/')));
  assert.deepEqual([...lazy, 'open'].filter((m) => graph.has(m)).map((m) => relative(root, m)), []);
});
