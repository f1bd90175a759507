/**
 * How every command that targets an instance is told which one (docs/guide.md, "Naming the instance"):
 * `--name <instance>` everywhere, as in `jackin run --name`; the commands that took a positional NAME
 * (attach, stop, forward, log) keep it. `-n` is never the instance: it is the Kubernetes namespace.
 */
import { JackinError } from '../errors.ts';
import { checkInstanceName } from '../transport/instance-paths.ts';

export const NAME_OPTION_HELP = 'the instance, as jackin run --name named it (jackin ls lists them)';

/**
 * The instance from a positional NAME and/or --name (and an old alias such as export's --from): each
 * spelling given must say the same name. Undefined when none was given; checked by checkInstanceName.
 */
export function namedInstance(spellings: ReadonlyArray<readonly [string, string | undefined]>): string | undefined {
  const given = spellings.filter((s): s is readonly [string, string] => s[1] !== undefined);
  const first = given[0];
  if (first === undefined) return undefined;
  const other = given.find((s) => s[1] !== first[1]);
  if (other !== undefined) {
    throw new JackinError('E_USAGE', `${first[0]} and ${other[0]} name different instances (${first[1]}, ${other[1]}): name it once`);
  }
  return checkInstanceName(first[1]);
}

/** namedInstance, or E_USAGE naming both spellings when none was given. */
export function requiredInstance(command: string, spellings: ReadonlyArray<readonly [string, string | undefined]>): string {
  const name = namedInstance(spellings);
  if (name === undefined)
    throw new JackinError('E_USAGE', `missing the instance: \`jackin ${command} NAME\` or \`jackin ${command} --name NAME\`; see \`jackin ${command} --help\``);
  return name;
}
