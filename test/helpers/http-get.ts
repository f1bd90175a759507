import { get } from 'node:http';

/**
 * One HTTP GET with no keep-alive agent (nothing left open for the test's cleanup): the status and the body
 * as UTF-8 text. Fails when no answer comes within `timeoutMs`.
 */
export function httpGetText(url: string, timeoutMs = 30_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => (body += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs / 1000} s`)));
    req.on('error', reject);
  });
}
