/**
 * `jackin completion bash|zsh|fish`: a shell completion script made from the command tree itself (every
 * visible command, its options with their short forms and choices), so it never lags behind the commands.
 * Instance names come from `jackin ls --names` (a hidden flag: the names under $JACKIN_HOME/sockets, no
 * capsule probed, so a Tab press stays cheap).
 */
import { Argument, type Command, type Option } from './commander.ts';
import { writeAll, type SetStatus } from './command-kit.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** What a value or a positional argument completes to. */
type Completes = { kind: 'words'; words: readonly string[] } | { kind: 'instances' } | { kind: 'files' } | { kind: 'commands' } | { kind: 'nothing' };

interface OptionSpec {
  /** `-n`, `--namespace`: the words that name the option. */
  names: string[];
  short?: string;
  long?: string;
  description: string;
  /** Null for a flag without a value. */
  value: Completes | null;
}

interface CommandSpec {
  name: string;
  description: string;
  options: OptionSpec[];
  /** What the first positional argument completes to (later ones complete to files). */
  positional: Completes;
}

/** A value placeholder (`<instance>`, `<dir>`) and what it completes to. */
function valueCompletes(option: Option): Completes | null {
  if (!option.required && !option.optional) return null;
  if (option.argChoices !== undefined) return { kind: 'words', words: option.argChoices };
  const placeholder = /<([^>]*)>|\[([^\]]*)\]/u.exec(option.flags);
  const name = placeholder?.[1] ?? placeholder?.[2] ?? '';
  if (name === 'instance') return { kind: 'instances' };
  if (/^(dir|file|path)$|:/u.test(name)) return { kind: 'files' };
  return { kind: 'nothing' };
}

/** The tree as the scripts see it: visible commands and options only. */
function commandSpecs(program: Command): { commands: CommandSpec[]; options: OptionSpec[] } {
  const help = program.createHelp();
  const optionSpecs = (command: Command): OptionSpec[] =>
    help.visibleOptions(command).map((o) => ({
      names: [o.short, o.long].filter((n): n is string => n !== undefined),
      ...(o.short !== undefined ? { short: o.short } : {}),
      ...(o.long !== undefined ? { long: o.long } : {}),
      description: o.description,
      value: valueCompletes(o),
    }));
  const commands = help.visibleCommands(program).map((c): CommandSpec => {
    const argument = c.registeredArguments[0];
    const first = argument?.name();
    const positional: Completes =
      c.name() === 'help'
        ? { kind: 'commands' }
        : argument?.argChoices !== undefined
          ? { kind: 'words', words: argument.argChoices }
          : first === 'instance' || first === 'name'
            ? { kind: 'instances' }
            : first === undefined
              ? { kind: 'nothing' }
              : { kind: 'files' };
    const subcommands = help.visibleCommands(c).filter((sub) => sub.name() !== 'help');
    if (subcommands.length === 0) return { name: c.name(), description: c.description(), options: optionSpecs(c), positional };
    // A command with subcommands (`jackin runtime ls|fetch|rm`): its first word is one of them, and the
    // subcommands' options complete after it (one list: the scripts know one level of commands).
    const options = [...optionSpecs(c), ...subcommands.flatMap(optionSpecs)].filter(
      (o, i, all) => all.findIndex((other) => other.names.join(' ') === o.names.join(' ')) === i,
    );
    return { name: c.name(), description: c.description(), options, positional: { kind: 'words', words: subcommands.map((sub) => sub.name()) } };
  });
  return { commands, options: optionSpecs(program) };
}

const oneLine = (s: string, max = 80): string => {
  const line = s.replace(/\s+/gu, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
};
/** Words here are option names, choices and command names: plain, but quoted all the same. */
const singleQuoted = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

const INSTALL: Record<Shell, string> = {
  bash: 'jackin completion bash > ~/.local/share/bash-completion/completions/jackin',
  zsh: 'jackin completion zsh > "${fpath[1]}/_jackin"',
  fish: 'jackin completion fish > ~/.config/fish/completions/jackin.fish',
};

function bashScript(program: Command): string {
  const { commands, options } = commandSpecs(program);
  const words = (ws: readonly string[]): string => singleQuoted(ws.join(' '));
  const valueCase = (opts: readonly OptionSpec[]): string[] => {
    const out: string[] = [];
    for (const o of opts) {
      if (o.value === null) continue;
      const pattern = o.names.join('|');
      const v = o.value;
      const action =
        v.kind === 'words'
          ? `COMPREPLY=($(compgen -W ${words(v.words)} -- "$cur"))`
          : v.kind === 'instances'
            ? 'COMPREPLY=($(compgen -W "$(_jackin_instances)" -- "$cur"))'
            : v.kind === 'files'
              ? 'COMPREPLY=($(compgen -f -- "$cur"))'
              : 'COMPREPLY=()';
      out.push(`        ${pattern}) ${action}; return ;;`);
    }
    return out;
  };
  const lines = [
    '# bash completion for jackin, made by `jackin completion bash`.',
    `# Install: ${INSTALL.bash}`,
    '_jackin_instances() { command jackin ls --names 2>/dev/null; }',
    '_jackin() {',
    '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= at=0 i j n=0 flags= valopts= pos=nothing poswords=',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; at=$i; break ;; esac',
    '  done',
    '  if [[ -z $cmd ]]; then',
    `    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W ${words(options.flatMap((o) => o.names))} -- "$cur"))`,
    `    else COMPREPLY=($(compgen -W ${words(commands.map((c) => c.name))} -- "$cur")); fi`,
    '    return',
    '  fi',
    '  case $cmd in',
  ];
  for (const c of commands) {
    const valopts = c.options.filter((o) => o.value !== null).flatMap((o) => o.names);
    lines.push(`    ${singleQuoted(c.name)})`);
    const poswords = c.positional.kind === 'words' ? ` poswords=${words(c.positional.words)}` : '';
    lines.push(`      flags=${words(c.options.flatMap((o) => o.names))} valopts=${words(valopts)} pos=${c.positional.kind}${poswords}`);
    const cases = valueCase(c.options);
    if (cases.length > 0) lines.push('      case $prev in', ...cases, '      esac');
    lines.push('      ;;');
  }
  lines.push(
    '    *) return ;;',
    '  esac',
    '  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); return; fi',
    // The positional arguments before this word: an option's value is none, nor anything after `--`.
    '  for ((j = at + 1; j < COMP_CWORD; j++)); do',
    '    case ${COMP_WORDS[j]} in',
    '      --) return ;;',
    '      -*) [[ " $valopts " == *" ${COMP_WORDS[j]} "* ]] && ((j++)) ;;',
    '      *) ((n++)) ;;',
    '    esac',
    '  done',
    '  case $pos in',
    '    words) ((n == 0)) && COMPREPLY=($(compgen -W "$poswords" -- "$cur")) ;;',
    '    instances) ((n == 0)) && COMPREPLY=($(compgen -W "$(_jackin_instances)" -- "$cur")) ;;',
    `    commands) ((n == 0)) && COMPREPLY=($(compgen -W ${words(commands.map((c) => c.name))} -- "$cur")) ;;`,
    '    files) COMPREPLY=($(compgen -f -- "$cur")) ;;',
    '  esac',
    '}',
    'complete -o default -F _jackin jackin',
    '',
  );
  return lines.join('\n');
}

function zshScript(program: Command): string {
  const { commands, options } = commandSpecs(program);
  const words = (ws: readonly string[]): string => ws.map(singleQuoted).join(' ');
  const action = (v: Completes): string =>
    v.kind === 'words'
      ? `compadd -- ${words(v.words)}`
      : v.kind === 'instances'
        ? 'compadd -- ${(f)"$(command jackin ls --names 2>/dev/null)"}'
        : v.kind === 'files'
          ? '_files'
          : v.kind === 'commands'
            ? `compadd -- ${words(commands.map((c) => c.name))}`
            : ':';
  const lines = [
    '#compdef jackin',
    '# zsh completion for jackin, made by `jackin completion zsh`.',
    `# Install: ${INSTALL.zsh}`,
    '_jackin() {',
    '  local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd= at=0 i j n=0',
    '  local -a valopts',
    '  for ((i = 2; i < CURRENT; i++)); do',
    '    if [[ ${words[i]} != -* ]]; then cmd=${words[i]}; at=$i; break; fi',
    '  done',
    '  if [[ -z $cmd ]]; then',
    `    if [[ $cur == -* ]]; then compadd -- ${words(options.flatMap((o) => o.names))}`,
    `    else compadd -- ${words(commands.map((c) => c.name))}; fi`,
    '    return',
    '  fi',
    '  case $cmd in',
  ];
  for (const c of commands) {
    lines.push(`    ${singleQuoted(c.name)})`);
    for (const o of c.options) {
      if (o.value !== null) lines.push(`      if [[ $prev == (${o.names.join('|')}) ]]; then ${action(o.value)}; return; fi`);
    }
    lines.push(`      if [[ $cur == -* ]]; then compadd -- ${words(c.options.flatMap((o) => o.names))}; return; fi`);
    lines.push(`      valopts=(${words(c.options.filter((o) => o.value !== null).flatMap((o) => o.names))})`);
    lines.push('      for ((j = at + 1; j < CURRENT; j++)); do');
    lines.push('        if [[ ${words[j]} == -- ]]; then return');
    lines.push('        elif [[ ${words[j]} == -* ]]; then (( ${valopts[(Ie)${words[j]}]} )) && ((j++))');
    lines.push('        else ((n++)); fi');
    lines.push('      done');
    const first = c.positional.kind === 'files' ? '_files' : `((n == 0)) && ${action(c.positional)}`;
    lines.push(`      ${first}`);
    lines.push('      ;;');
  }
  lines.push(
    '  esac',
    '}',
    // Autoloaded from $fpath the file is the function's body; sourced, it registers the function.
    'if [[ ${funcstack[1]} == _jackin ]]; then _jackin "$@"; else compdef _jackin jackin; fi',
    '',
  );
  return lines.join('\n');
}

function fishScript(program: Command): string {
  const { commands, options } = commandSpecs(program);
  const names = commands.map((c) => c.name).join(' ');
  const option = (condition: string, o: OptionSpec): string => {
    const parts = ['complete -c jackin', `-n ${singleQuoted(condition)}`];
    if (o.short !== undefined) parts.push(`-s ${o.short.slice(1)}`);
    if (o.long !== undefined) parts.push(`-l ${o.long.slice(2)}`);
    const v = o.value;
    if (v !== null) {
      if (v.kind === 'words') parts.push(`-x -a ${singleQuoted(v.words.join(' '))}`);
      else if (v.kind === 'instances') parts.push(`-x -a ${singleQuoted('(command jackin ls --names 2>/dev/null)')}`);
      else if (v.kind === 'files') parts.push('-r -F');
      else parts.push('-x');
    }
    parts.push(`-d ${singleQuoted(oneLine(o.description))}`);
    return parts.join(' ');
  };
  const lines = [
    '# fish completion for jackin, made by `jackin completion fish`.',
    `# Install: ${INSTALL.fish}`,
    'complete -c jackin -f',
    ...options.map((o) => option('__fish_use_subcommand', o)),
    ...commands.map((c) => `complete -c jackin -n __fish_use_subcommand -a ${singleQuoted(c.name)} -d ${singleQuoted(oneLine(c.description))}`),
  ];
  for (const c of commands) {
    const seen = `__fish_seen_subcommand_from ${c.name}`;
    lines.push(...c.options.map((o) => option(seen, o)));
    if (c.positional.kind === 'instances')
      lines.push(`complete -c jackin -n ${singleQuoted(seen)} -a ${singleQuoted('(command jackin ls --names 2>/dev/null)')}`);
    else if (c.positional.kind === 'files') lines.push(`complete -c jackin -n ${singleQuoted(seen)} -F`);
    else if (c.positional.kind === 'commands') lines.push(`complete -c jackin -n ${singleQuoted(seen)} -a ${singleQuoted(names)}`);
    else if (c.positional.kind === 'words') lines.push(`complete -c jackin -n ${singleQuoted(seen)} -a ${singleQuoted(c.positional.words.join(' '))}`);
  }
  lines.push('');
  return lines.join('\n');
}

/** The completion script for `shell`, made from `program`'s command tree. */
function completionScript(shell: Shell, program: Command): string {
  return shell === 'bash' ? bashScript(program) : shell === 'zsh' ? zshScript(program) : fishScript(program);
}

export function registerCompletionCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish: commands, options and instance names')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText(
      'after',
      `
Install it once where your shell looks for completions (it is made from this jackin's commands: install it again after an upgrade):

  ${INSTALL.bash}
  ${INSTALL.zsh}
  ${INSTALL.fish}

For zsh, \${fpath[1]} is the first directory of your $fpath: start a new shell (or run compinit) afterwards. Or load it in the running shell: source <(jackin completion bash). Instance names are completed from jackin ls --names (the names under $JACKIN_HOME/sockets).

Examples:
  jackin completion bash > ~/.local/share/bash-completion/completions/jackin
  jackin completion fish | source`,
    )
    .action(async (shell: Shell) => {
      await writeAll(process.stdout, completionScript(shell, program));
      setStatus(0);
    });
}
