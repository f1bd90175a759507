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
    'import * as c from "net";',
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
  assert.ok(
    files.some((f) => f.endsWith(join('protocol', 'decoder.ts'))),
    'the protocol sources were found',
  );
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
  assert.deepEqual(staticSpecifiers("import { a } from './a.ts';\nimport type { B } from './b.ts';\nconst c = await import('./c.ts');\nimport 'node:fs';"), [
    './a.ts',
    'node:fs',
  ]);
  assert.deepEqual(
    staticSpecifiers(
      "const x = createRequire(import.meta.url)('x') as X;\nconst { Y } = requireCjs('@s/y') as typeof Y;\nexport const { Z } = createRequire(u)('z');",
    ),
    ['x', '@s/y', 'z'],
  );
  const graph = staticGraph(join(src, 'cli', 'jackin.ts'));
  assert.ok(graph.has(join(src, 'host', 'export', 'export-client.ts')), 'the graph follows relative imports');
  assert.ok(graph.has('commander'), 'the graph lists packages');
  const lazy = [
    'host/session/attach.ts',
    'host/terminal/terminal.ts',
    'host/instances/doctor.ts',
    'host/paste/paste-feature.ts',
    'host/links/link-feature.ts',
    'host/export/export-feature.ts',
    'host/copy/copy-feature.ts',
    'host/terminal/terminal-filter/filter.ts',
  ].map((p) => join(src, ...p.split('/')));
  assert.deepEqual(
    [...lazy, 'open'].filter((m) => graph.has(m)).map((m) => relative(root, m)),
    [],
  );
});

test('no source file loads node:crypto or node:zlib when it loads: they load at first use (src/lazy-builtins.ts)', () => {
  // An idle session never needs them, and each held memory for the process's life (test/idle-e2e.test.ts).
  const eager = sourceFiles(src)
    .filter((f) => !isTest(f))
    .filter((f) => staticSpecifiers(readFileSync(f, 'utf8')).some((s) => /^(node:)?(crypto|zlib)$/.test(s)))
    .map((f) => relative(root, f));
  assert.deepEqual(eager, []);
  assert.deepEqual(staticSpecifiers("import { createHash } from 'node:crypto';\nimport type { Hash } from 'node:crypto';"), ['node:crypto']);
});

/**
 * The rooms of src/host and src/capsule (README, "Layout"): each side is a session core, the layers below
 * it, and one folder per affordance. Any folder not named here is an affordance, so a new one (forward/,
 * notify/, hints/) falls under the rules without a change to this test.
 */
const ROOMS = {
  host: { core: ['session'], below: ['terminal', 'platform', 'instances', 'runtime'] },
  capsule: { core: ['session', 'connection', 'screen'], below: [] as string[] },
} as const;
/** Source files that may stay at the top of src/host or src/capsule (the capsule's wiring and its relay). */
const MAX_LOOSE_FILES = 12;

type Room = { side: 'host' | 'capsule'; kind: 'core' | 'below' | 'affordance' | 'top'; name: string } | null;

/** The room of a path under src (null outside src/host and src/capsule). */
function roomOf(file: string): Room {
  const parts = relative(src, file).split(sep);
  const side = parts[0];
  if (side !== 'host' && side !== 'capsule') return null;
  if (parts.length === 2) return { side, kind: 'top', name: parts[1]! };
  const name = parts[1]!;
  const rooms = ROOMS[side];
  const kind = (rooms.core as readonly string[]).includes(name) ? 'core' : (rooms.below as readonly string[]).includes(name) ? 'below' : 'affordance';
  return { side, kind, name };
}

/** Why an import from one room into another breaks the layout, or null when it does not. */
function layoutOffence(from: Room, to: Room): string | null {
  if (from === null || to === null || from.side !== to.side || from.name === to.name) return null;
  if (from.kind === 'affordance' && to.kind === 'affordance')
    return `affordance ${from.name}/ imports affordance ${to.name}/ (what they share belongs in the core or a layer below)`;
  if (from.kind === 'core' && to.kind === 'affordance')
    return `the session core (${from.name}/) imports affordance ${to.name}/ (affordances install themselves on a session)`;
  if (from.kind === 'below' && (to.kind === 'core' || to.kind === 'affordance'))
    return `${from.name}/ is below the session and imports ${to.kind === 'core' ? 'the core' : 'affordance'} ${to.name}/`;
  if (from.kind !== 'top' && to.kind === 'top') return `${from.name}/ imports ${to.name}, which wires the side together`;
  return null;
}

/** Every relative import of every file under src: [file, specifier, resolved target]. */
function relativeImports(): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const f of sourceFiles(src)) {
    for (const s of specifiers(readFileSync(f, 'utf8'))) if (s.startsWith('.')) out.push([f, s, resolve(dirname(f), s)]);
  }
  return out;
}

test('the layout rules name what they forbid (so the check below cannot pass vacuously)', () => {
  const at = (p: string): Room => roomOf(join(src, ...p.split('/')));
  assert.deepEqual(at('host/paste/paste-feature.ts'), { side: 'host', kind: 'affordance', name: 'paste' });
  assert.deepEqual(at('capsule/screen/links.ts'), { side: 'capsule', kind: 'core', name: 'screen' });
  assert.equal(at('cli/jackin.ts'), null);
  assert.match(layoutOffence(at('host/links/link-feature.ts'), at('host/export/export-feature.ts')) ?? '', /affordance links\/ imports affordance export\//);
  assert.match(layoutOffence(at('host/session/attach.ts'), at('host/copy/copy-feature.ts')) ?? '', /session core/);
  assert.match(layoutOffence(at('host/terminal/terminal.ts'), at('host/session/attach.ts')) ?? '', /below the session/);
  assert.match(layoutOffence(at('capsule/session/server.ts'), at('capsule/export/tar-zstd.ts')) ?? '', /session core/);
  assert.match(layoutOffence(at('capsule/images/image-feature.ts'), at('capsule/serve.ts')) ?? '', /wires/);
  for (const [a, b] of [
    ['host/paste/paste-feature.ts', 'host/session/feature-session.ts'],
    ['host/paste/paste-feature.ts', 'host/platform/clipboard/select.ts'],
    ['host/session/attach.ts', 'host/terminal/terminal.ts'],
    ['capsule/serve.ts', 'capsule/export/export-methods.ts'],
    ['capsule/images/image-feature.ts', 'capsule/session/staging.ts'],
  ] as const) {
    assert.equal(layoutOffence(at(a), at(b)), null, `${a} -> ${b}`);
  }
});

test('src/host and src/capsule keep their rooms: affordances import the core and the layers below, never each other', () => {
  const imports = relativeImports();
  assert.ok(imports.length > 300, 'the imports were found');
  const offences: string[] = [];
  for (const [f, s, target] of imports) {
    const why = layoutOffence(roomOf(f), roomOf(target));
    if (why !== null) offences.push(`${relative(root, f)} imports ${s}: ${why}`);
  }
  assert.deepEqual(offences, []);
});

test(`at most ${MAX_LOOSE_FILES} source files stay at the top of src/host and src/capsule`, () => {
  for (const side of ['host', 'capsule']) {
    const loose = readdirSync(join(src, side)).filter((n) => /\.ts$/.test(n) && !isTest(n) && statSync(join(src, side, n)).isFile());
    assert.ok(loose.length <= MAX_LOOSE_FILES, `src/${side} has ${loose.length} loose source files: ${loose.join(', ')}`);
  }
});

/** The import circles among `nodes` (strongly connected components of more than one file, or a file importing itself). */
function importCircles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative over an explicit stack of [node, next edge index].
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, i] = top;
      const out = edges.get(v) ?? [];
      if (i < out.length) {
        top[1] = i + 1;
        const w = out[i]!;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || out.includes(v)) circles.push(component.sort());
      }
    }
  }
  return circles;
}

test('no import circles anywhere in src (type imports included)', () => {
  assert.deepEqual(
    importCircles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['a']],
      ]),
    ),
    [['a', 'b', 'c']],
  );
  assert.deepEqual(
    importCircles(
      new Map([
        ['a', ['a']],
        ['b', []],
      ]),
    ),
    [['a']],
  );
  assert.deepEqual(
    importCircles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
  const edges = new Map<string, string[]>();
  for (const f of sourceFiles(src)) if (!isTest(f)) edges.set(f, []);
  for (const [f, , target] of relativeImports()) if (edges.has(f) && edges.has(target)) edges.get(f)!.push(target);
  assert.deepEqual(
    importCircles(edges).map((c) => c.map((f) => relative(root, f)).join(' <-> ')),
    [],
  );
});
