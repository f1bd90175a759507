/** `jackin doctor [--json]`: checks the clipboard, the opener, the download directory, the keys, the container engines, the lent capsule and each instance. */
import { inertJson } from '../ui/inert-text.ts';
import type { Command } from './commander.ts';
import { writeAll, type SetStatus } from './command-kit.ts';
import { configFilePath, loadConfigFile } from './config-file.ts';
import type { Check } from '../host/instances/doctor.ts';

/** Which config file jackin read and what it sets (run() already applied it, so it is valid here). */
function configCheck(env: NodeJS.ProcessEnv): Check {
  const config = loadConfigFile(env);
  if (config === null) {
    const path = configFilePath(env)?.path;
    return { name: 'config', status: 'ok', detail: path === undefined ? 'no config file (JACKIN_CONFIG is off)' : `no config file (${path} does not exist)` };
  }
  // The environment wins: a variable whose value is not the file's was set there.
  const names = [...config.settings].map(([name, value]) => (env[name] === value ? name : `${name} (the environment's value wins)`));
  return { name: 'config', status: 'ok', detail: `read ${config.path}: ${names.length === 0 ? 'sets nothing' : `sets ${names.join(', ')}`}` };
}

async function doctorCommand(flags: { json?: boolean }): Promise<number> {
  const { formatChecks, runDoctor } = await import('../host/instances/doctor.ts');
  const checks = [configCheck(process.env), ...(await runDoctor())];
  const ok = checks.every((c) => c.status !== 'error');
  await writeAll(process.stdout, flags.json === true ? `${inertJson({ ok, checks })}\n` : formatChecks(checks));
  return ok ? 0 : 1;
}

export function registerDoctorCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('doctor')
    .description(
      'check the config file, the clipboard backend, the link opener, the download directory, the keys, the container engines, what jackin run --image lends a container, and each instance, with the fix for each problem',
    )
    .option('--json', 'print one JSON object: {"ok":bool,"checks":[{name,status,detail,fix?}]}')
    .addHelpText('after', '\nExit status: 0 when nothing is an error (warnings allowed), 1 otherwise.\n\nExamples:\n  jackin doctor\n  jackin doctor --json')
    .action(async (flags: { json?: boolean }) => setStatus(await doctorCommand(flags)));
}
