/**
 * `jackin run --image ... --dry-run --format compose|devcontainer`: the container `jackin run --image` would
 * start, written as a compose service or a devcontainer.json, with this host's own paths (where its Node
 * and the jackin package are). Both are read back from the engine argv containerRunArgv() builds, so the
 * three forms cannot drift apart: a setting added to the argv that has no form here is an error, not a
 * setting silently left out.
 */
import { JackinError } from '../../errors.ts';
import { formatArgv } from '../../transport/exec-args.ts';

export const RECIPE_FORMATS = ['sh', 'compose', 'devcontainer'] as const;
export type RecipeFormat = (typeof RECIPE_FORMATS)[number];

/** The settings of a `docker run -d ...` argv from containerRunArgv, by kind. */
export interface RunSettings {
  name: string;
  init: boolean;
  user: string | null;
  workdir: string;
  /** In argv order; a null value is passed by name (`-e NAME`). */
  env: Array<{ name: string; value: string | null }>;
  volumes: Array<{ host: string; container: string; mode: string | null }>;
  network: string | null;
  image: string;
  /** The entrypoint and its arguments up to and including `--`. */
  entrypoint: string[];
  program: string[];
}

/** Reads back an argv of containerRunArgv (engine first). Anything else before the image has no recipe form. */
export function runSettings(argv: readonly string[]): RunSettings {
  const s: RunSettings = { name: '', init: false, user: null, workdir: '', env: [], volumes: [], network: null, image: '', entrypoint: [], program: [] };
  let i = 2; // after `ENGINE run`
  const value = (): string => {
    const v = argv[++i];
    if (v === undefined) throw new TypeError(`${argv[i - 1]} without a value`);
    return v;
  };
  let entrypoint: string | null = null;
  for (; i < argv.length && entrypoint === null; i++) {
    const a = argv[i]!;
    if (a === '-d') continue;
    if (a === '--init') s.init = true;
    else if (a === '--name') s.name = value();
    else if (a === '--label') value();
    else if (a === '-w') s.workdir = value();
    else if (a === '--user') s.user = value();
    else if (a === '--network') s.network = value();
    else if (a === '--entrypoint') entrypoint = value();
    else if (a === '-e') {
      const spec = value();
      const eq = spec.indexOf('=');
      s.env.push(eq === -1 ? { name: spec, value: null } : { name: spec.slice(0, eq), value: spec.slice(eq + 1) });
    } else if (a === '-v') {
      const [host, container, mode] = value().split(':');
      s.volumes.push({ host: host!, container: container!, mode: mode ?? null });
    } else {
      throw new JackinError('E_USAGE', `${a} has no compose or devcontainer form: leave out --engine-arg and add it to the file yourself`);
    }
  }
  if (entrypoint === null) throw new TypeError('no --entrypoint in the argv');
  s.image = argv[i]!;
  const rest = argv.slice(i + 1);
  const split = rest.indexOf('--');
  s.entrypoint = [entrypoint, ...rest.slice(0, split + 1)];
  s.program = rest.slice(split + 1);
  return s;
}

/** Where the recipe is written from, to shorten host paths as a reader writes them. */
export interface RecipePlaces {
  /** The operator's home directory. */
  home: string;
  /** The workspace (the project folder the file goes in). */
  workspace: string;
  /**
   * Values given on jackin's own command line (`--env NAME=VALUE`): written into the file as they are. Every
   * other variable (from this environment or an env file) is read from the environment that runs the file.
   */
  values: ReadonlyMap<string, string>;
}

/** `path` under `root` as `prefix/rest` (or `whole` for the root itself), else null. */
function under(path: string, root: string, prefix: string, whole: string = prefix): string | null {
  if (path === root) return whole;
  return root !== '/' && path.startsWith(`${root}/`) ? `${prefix}/${path.slice(root.length + 1)}` : null;
}

const YAML_PLAIN = /^[A-Za-z0-9_./~+@%-][A-Za-z0-9_./:~+@%,=-]*$/;
/** A YAML 1.1 reader takes these plain scalars for booleans, nulls and numbers (1000:1000 is base 60). */
const YAML_NOT_STRING = /^(?:[-+]?[0-9][0-9_:.]*|[-+]?\.(?:inf|nan)|y|n|yes|no|on|off|true|false|null|~)$/i;

/** A YAML scalar for a string: plain when it reads back as the same string, else double-quoted (JSON is YAML). */
function yamlString(s: string): string {
  return YAML_PLAIN.test(s) && !YAML_NOT_STRING.test(s) ? s : JSON.stringify(s);
}

/** Compose interpolates `$` in every value: a literal one is written `$$`. */
const composeLiteral = (v: string): string => v.replaceAll('$', '$$$$');

/** A flow sequence of strings, continued on the next line (aligned after the key) past the width. */
function yamlFlow(key: string, items: readonly string[], indent: string, width = 110): string {
  const head = `${indent}${key}: [`;
  const lines: string[] = [];
  let line = head;
  items.forEach((item, n) => {
    const piece = `${JSON.stringify(composeLiteral(item))}${n < items.length - 1 ? ',' : ']'}`;
    if (line.length + 1 + piece.length > width && line.length > head.length) {
      lines.push(line);
      line = `${' '.repeat(head.length)}${piece}`;
    } else line += line.length > head.length ? ` ${piece}` : piece;
  });
  if (items.length === 0) line += ']';
  lines.push(line);
  return lines.join('\n');
}

/** The compose service (a whole compose file) that starts the same container. */
export function composeRecipe(argv: readonly string[], places: RecipePlaces): string {
  const s = runSettings(argv);
  const hostPath = (p: string): string => under(p, places.workspace, '.') ?? under(p, places.home, '~') ?? p;
  const out = [
    `# First: mkdir -p -m 700 ${hostPath(s.volumes[0]!.host)}`,
    `# Then: docker compose up -d (or podman-compose up -d), and jackin attach ${s.name}`,
  ];
  out.push('services:', `  ${s.name}:`, `    image: ${yamlString(composeLiteral(s.image))}`);
  if (s.init) out.push('    init: true');
  if (s.user !== null) out.push(`    user: ${JSON.stringify(composeLiteral(s.user))}`);
  out.push(`    working_dir: ${yamlString(composeLiteral(s.workdir))}`);
  if (s.network !== null) out.push(`    network_mode: ${yamlString(composeLiteral(s.network))}`);
  out.push('    environment:');
  for (const e of s.env) {
    const given = places.values.get(e.name);
    const v = e.value !== null ? composeLiteral(e.value) : given !== undefined ? composeLiteral(given) : `\${${e.name}}`;
    out.push(`      ${e.name}: ${yamlString(v)}`);
  }
  out.push('    volumes:');
  for (const v of s.volumes) out.push(`      - ${yamlString(composeLiteral(`${hostPath(v.host)}:${v.container}${v.mode === null ? '' : `:${v.mode}`}`))}`);
  out.push(yamlFlow('entrypoint', s.entrypoint, '    '), yamlFlow('command', s.program, '    '));
  return `${out.join('\n')}\n`;
}

/** The devcontainer.json that starts the same container, the capsule in the background once it runs. */
export function devcontainerRecipe(argv: readonly string[], places: RecipePlaces): string {
  const s = runSettings(argv);
  const hostPath = (p: string): string => under(p, places.workspace, '${localWorkspaceFolder}') ?? under(p, places.home, '${localEnv:HOME}') ?? p;
  const mount = (v: RunSettings['volumes'][number]): string =>
    `type=bind,source=${hostPath(v.host)},target=${v.container}${v.mode === 'ro' ? ',readonly' : ''}`;
  const workspaceIndex = s.volumes.findIndex((v) => v.container === s.workdir);
  const env: Record<string, string> = {};
  for (const e of s.env) env[e.name] = e.value ?? places.values.get(e.name) ?? `\${localEnv:${e.name}}`;
  const dc: Record<string, unknown> = {
    image: s.image,
    ...(s.init ? { init: true } : {}),
    ...(s.user !== null ? { containerUser: s.user } : {}),
    containerEnv: env,
    ...(s.network !== null ? { runArgs: [`--network=${s.network}`] } : {}),
    mounts: s.volumes.filter((_, n) => n !== workspaceIndex).map(mount),
    workspaceMount: mount(s.volumes[workspaceIndex]!),
    workspaceFolder: s.workdir,
    initializeCommand: `mkdir -p -m 700 ${hostPath(s.volumes[0]!.host)}`,
    postStartCommand: `nohup ${formatArgv([...s.entrypoint, ...s.program])} >/dev/null 2>&1 &`,
  };
  return `${JSON.stringify(dc, null, 2)}\n`;
}
