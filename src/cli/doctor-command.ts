/** `jackin doctor [--json]`: checks the clipboard, the opener, the download directory, the keys, the container engines and each instance. */
import { inertJson } from '../ui/inert-text.ts';
import type { Command } from './commander.ts';
import { writeAll, type SetStatus } from './command-kit.ts';

async function doctorCommand(flags: { json?: boolean }): Promise<number> {
  const { formatChecks, runDoctor } = await import('../host/instances/doctor.ts');
  const checks = await runDoctor();
  const ok = checks.every((c) => c.status !== 'error');
  await writeAll(process.stdout, flags.json === true ? `${inertJson({ ok, checks })}\n` : formatChecks(checks));
  return ok ? 0 : 1;
}

export function registerDoctorCommand(program: Command, setStatus: SetStatus): void {
  program
    .command('doctor')
    .description(
      'check the clipboard backend, the link opener, the download directory, the keys, the container engines and each instance, with the fix for each problem',
    )
    .option('--json', 'print one JSON object: {"ok":bool,"checks":[{name,status,detail,fix?}]}')
    .addHelpText('after', '\nExit status: 0 when nothing is an error (warnings allowed), 1 otherwise.\n\nExamples:\n  jackin doctor\n  jackin doctor --json')
    .action(async (flags: { json?: boolean }) => setStatus(await doctorCommand(flags)));
}
