/**
 * A stand-in OpenAI-compatible model server for the agent tests: every chat completion is `reply`
 * (streamed as server-sent events when asked to stream), `/models` lists `model`. It logs each request's
 * method and path to stderr when STAND_IN_MODEL_LOG is set.
 *
 * Plain JavaScript with no imports beyond Node's, so that a container runs it with the Node jackin lends it:
 *   node stand-in-model.mjs PORT PART...   (the reply is the PARTs joined by "-", so a command line that
 *   starts it does not show the reply itself; listens on 127.0.0.1:PORT, prints "listening PORT")
 * A test on the host imports `startStandInModel` instead.
 */
import { createServer } from 'node:http';

const MODEL = 'gpt-4o';

function handler(reply) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (process.env['STAND_IN_MODEL_LOG']) process.stderr.write(`${req.method} ${req.url}\n`);
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'GET' && path.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: MODEL, object: 'model', created: 0, owned_by: 'jackin' }] }));
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no ${req.method} ${path} here`, type: 'not_found' } }));
        return;
      }
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // An empty or odd body gets the same answer.
      }
      const id = 'chatcmpl-jackin';
      const created = Math.floor(Date.now() / 1000);
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const event = (delta, finish) =>
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(event({ role: 'assistant', content: '' }, null));
        res.write(event({ content: reply }, null));
        res.write(event({}, 'stop'));
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: MODEL, choices: [], usage })}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: MODEL,
          choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
          usage,
        }),
      );
    });
  };
}

/** Starts the server on 127.0.0.1 (a free port unless one is given); resolves with its port and a stop. */
export function startStandInModel(reply, port = 0) {
  const server = createServer(handler(reply));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : port,
        stop: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [port, ...parts] = process.argv.slice(2);
  const { port: bound } = await startStandInModel(parts.length > 0 ? parts.join('-') : 'stand-in-reply', Number(port ?? 0));
  process.stdout.write(`listening ${bound}\n`);
}
