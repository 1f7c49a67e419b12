// sse_clients.mjs URL N COMMAND... - opens N event streams on URL (one
// connection each), waits until all are open, runs COMMAND (a committed
// change of the run), and prints, for the first event every stream gets
// after it, the latency from the command's start: median, p99 and max in
// ms, and how many streams got it within 1 s.  No npm package needed
// (node's http); used by ops/bench web.
import http from 'node:http';
import { execFileSync } from 'node:child_process';

const [url, n, ...command] = process.argv.slice(2);
const total = Number(n);
const agent = new http.Agent({ keepAlive: true, maxSockets: total + 10 });
let open = 0, t0 = 0;
const got = [];
let resolveOpen, resolveDone;
const allOpen = new Promise((r) => { resolveOpen = r; });
const allDone = new Promise((r) => { resolveDone = r; });
for (let i = 0; i < total; i++) {
  http.get(url, { agent }, (res) => {
    if (res.statusCode !== 200) { console.error(`stream ${i}: HTTP ${res.statusCode}`); process.exit(1); }
    let seen = false, buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => {
      buffer += chunk;
      if (!seen && buffer.includes('retry:')) { seen = true; buffer = ''; if (++open === total) resolveOpen(); return; }
      if (t0 && buffer.includes('event: run')) {
        got.push(performance.now() - t0);
        res.destroy();
        if (got.length === total) resolveDone();
      }
    });
  }).on('error', (e) => { console.error(`stream ${i}: ${e.message}`); process.exit(1); });
}
await allOpen;
await new Promise((r) => setTimeout(r, 500));
t0 = performance.now();
execFileSync(command[0], command.slice(1), { stdio: 'ignore' });
await Promise.race([allDone, new Promise((r) => setTimeout(r, 5000))]);
got.sort((a, b) => a - b);
const q = (p) => got[Math.min(got.length - 1, Math.floor(p * got.length))];
const within = got.filter((t) => t <= 1000).length;
console.log(`sse: ${total} streams, ${got.length} got the event; latency from the commit's start: ` +
            `median ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${got[got.length - 1].toFixed(1)} ms; ` +
            `${within}/${total} within 1 s`);
process.exit(0);
