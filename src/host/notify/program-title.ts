/**
 * A program's notification title on the host desktop must not pass for jackin's own: jackin never puts a
 * notification of its own on the desktop, so a title that starts like jackin's ("jackin: action required",
 * "[JACKIN] approve", with lookalike letters) is the program posing as it, and gets a mark in front.
 */

/** Put before a program title that starts like jackin's. */
const PROGRAM_TITLE_MARK = 'program: ';

/** Letters that look like Latin ones and that Unicode normalisation keeps apart (a cheap, partial table). */
const LOOKALIKES: Readonly<Record<string, string>> = {
  а: 'a',
  ɑ: 'a',
  α: 'a', // Cyrillic a, Latin alpha, Greek alpha
  с: 'c',
  ϲ: 'c',
  ᴄ: 'c', // Cyrillic es, Greek lunate sigma, small capital C
  к: 'k',
  κ: 'k',
  ᴋ: 'k', // Cyrillic ka, Greek kappa, small capital K
  і: 'i',
  ı: 'i',
  ι: 'i',
  ɪ: 'i',
  ӏ: 'i',
  '1': 'i',
  l: 'i',
  '|': 'i',
  '!': 'i', // dotless, iota, palochka...
  ј: 'j',
  ʝ: 'j',
  ϳ: 'j',
  ᴊ: 'j', // Cyrillic je, j with crossed-tail, Greek yot, small capital J
  п: 'n',
  ո: 'n',
  ռ: 'n',
  ɴ: 'n',
  η: 'n', // Cyrillic pe, Armenian vo and ra, small capital N, eta
};

/** Whether `title` starts like jackin's name: case, accents, compatibility forms, lookalikes and punctuation aside. */
export function startsLikeJackin(title: string): boolean {
  // Leading symbols first ("✓ ", "! ", "[", "|"), so they are not read as lookalike letters.
  const folded = [
    ...title
      .slice(0, 64)
      .normalize('NFKD')
      .toLowerCase()
      .replace(/^[^\p{L}\p{N}]+/u, ''),
  ]
    .map((c) => LOOKALIKES[c] ?? c)
    .join('')
    .replace(/[^a-z0-9]/gu, '');
  return folded.startsWith('jackin');
}

/** The title the desktop shows for a program's notification: marked when it starts like jackin's. */
export function markProgramTitle(title: string): string {
  return startsLikeJackin(title) ? `${PROGRAM_TITLE_MARK}${title}` : title;
}
