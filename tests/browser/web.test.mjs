// The web dashboard in a real browser: Debian's headless Chromium driven by
// puppeteer-core, against a real PostgreSQL (XQF_TEST_DB), coordinator,
// worker and xqf-web (XQF_BIN).  Run by ctest (test "browser", label
// "browser"; ops/setup installs puppeteer-core into tests/browser/node_modules).
// XQF_SCREENSHOTS=DIR keeps the screenshots of the run, machines, engines, new-run forms (SPRT, SPSA, data),
// waiting-for-builds, SPRT calculator and nets pages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const BIN = process.env.XQF_BIN;
const BASE_DB = process.env.XQF_TEST_DB;
const CHROMIUM = process.env.XQF_CHROMIUM || '/usr/bin/chromium';
const skip = !BIN || !BASE_DB ? 'XQF_BIN and XQF_TEST_DB are needed' : false;
const dir = mkdtempSync(join(tmpdir(), 'xqf-browser-'));
const log = openSync(join(dir, 'log'), 'a');
const dbname = `xqf_browser_${process.pid}`;
const db = `${BASE_DB} dbname=${dbname}`;
const procs = [];
let browser, url, run, evil, pendingRun;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
function start(program, args) {
  const p = spawn(join(BIN, program), args, { stdio: ['ignore', log, log] });
  procs.push(p);
  return p;
}
function tune(args, input) {
  return execFileSync(join(BIN, 'xqf-tune'), [...args, '--db', db], { input, stdio: ['pipe', 'pipe', log] })
    .toString().trim();
}
function psql(conn, sql) { execFileSync('psql', ['-q', conn, '-c', sql], { stdio: ['ignore', 'ignore', log] }); }
// The database as a program's login role (ops/pg makes them: schemas/sql/migrations/030_roles.sql), as in
// production; as the owner on a cluster without them.
function as(program) {
  const found = execFileSync('psql', ['-X', '-tA', BASE_DB, '-c',
    `SELECT count(*) FROM pg_roles WHERE rolname = 'xqf-${program}'`]).toString().trim();
  return found === '1' ? `${db} user=xqf-${program}` : db;
}

async function login(page, user, password) {
  await page.goto(`${url}/login`);
  await page.type('#f-user', user);
  await page.type('#f-password', password);
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
}

before(async () => {
  if (skip) return;
  psql(BASE_DB, `DROP DATABASE IF EXISTS ${dbname}`);
  psql(BASE_DB, `CREATE DATABASE ${dbname}`);
  const zmq = await freePort();
  const http = await freePort();
  execFileSync(join(BIN, 'xqf-coordinator'), ['--migrate', '--db', db], { stdio: ['ignore', 'ignore', log] });
  start('xqf-coordinator', ['--db', as('coordinator'), '--bind', `tcp://127.0.0.1:${zmq}`]);
  run = tune(['sprt', 'new', '--test', 'NullR=2', '--base', '', '--nodes', '3000', '--pairs-per-task', '2',
              '--max-pairs', '100000', '--name', 'live SPRT']);
  evil = tune(['sprt', 'new', '--test', 'NullR=2', '--base', '', '--nodes', '300', '--max-pairs', '10',
               '--name', '<script>window.pwned=1</script>', '--priority', '-5']);
  tune(['user', 'add', 'vic', '--role', 'viewer'], 'viewpass1\n');
  tune(['user', 'add', 'tess', '--role', 'tester'], 'testpass1\n');
  tune(['user', 'add', 'ada', '--role', 'admin'], 'adminpass1\n');
  start('xqf-web', ['--db', as('web'), '--port', String(http)]);
  start('xqf-worker', ['--connect', `tcp://127.0.0.1:${zmq}`, '--name', 'browser-worker', '--concurrency', '1']);
  url = `http://127.0.0.1:${http}`;
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
                                     args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});

after(async () => {
  if (browser) await browser.close();
  for (const p of procs) p.kill('SIGTERM');
  await sleep(500);
  if (!skip) psql(BASE_DB, `DROP DATABASE IF EXISTS ${dbname} WITH (FORCE)`);
});

test('the runs page lists the live run, and a <script> name as text', { skip }, async () => {
  const page = await browser.newPage();
  await page.goto(`${url}/`);
  const names = await page.$$eval('td.name', (cells) => cells.map((c) => c.textContent));
  assert.ok(names.includes('live SPRT'), names.join(','));
  assert.ok(names.includes('<script>window.pwned=1</script>'), 'the name is shown as text');
  assert.equal(await page.evaluate(() => window.pwned), undefined, 'the name ran as a script');
  await page.close();
});

test("the run page's LLR and chart follow the worker's reports (SSE)", { skip }, async () => {
  const page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 1000 });
  await page.goto(`${url}/runs/${run}`);
  await page.waitForSelector('#live.live-on', { timeout: 10000 });
  const read = () => page.evaluate(() => {
    const llr = document.querySelector('[data-k="llr"]').textContent;
    const games = document.querySelector('[data-k="games"]').textContent;
    const chart = window.Chart && window.Chart.getChart('llr');
    const data = chart ? chart.data.datasets[0].data : [];
    return { llr, games, last: data.length ? data[data.length - 1].x : -1, updates: document.body.dataset.updates };
  });
  const first = await read();
  let now = first;
  for (let i = 0; i < 60 && !(now.updates && now.games !== first.games && now.last > first.last); i++) {
    await sleep(500);
    now = await read();
  }
  assert.ok(now.updates, 'no event arrived');
  assert.notEqual(now.games, first.games, 'the games count did not change in place');
  assert.ok(now.last > first.last, `the chart's last point did not move (${first.last} -> ${now.last})`);
  assert.match(now.llr, /^-?\d+\.\d\d \[-2\.94, 2\.94\]$/);
  if (process.env.XQF_SCREENSHOTS) {
    await sleep(Number(process.env.XQF_SCREENSHOT_WAIT_MS || 1500));   // more games on the charts
    await page.reload();                                                // the task table too
    await page.waitForSelector('#live.live-on', { timeout: 10000 });
    await sleep(1500);
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'run.png'), fullPage: true });
  }
  await page.close();
});

test('the machines page shows the worker', { skip }, async () => {
  const page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 500 });
  await page.goto(`${url}/machines`);
  const text = await page.$eval('main', (m) => m.textContent);
  assert.match(text, /browser-worker/);
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'machines.png'), fullPage: true });
  await page.close();
});

test('the SPRT calculator answers as xqf-tune stats --expected, and its result is a link', { skip }, async () => {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 900 });
  await page.goto(`${url}/sprt-calc`);
  for (const [f, v] of [['elo0', '0'], ['elo1', '2'], ['alpha', '0.05'], ['beta', '0.1'], ['elo', '1.5']])
    await page.$eval(`#f-${f}`, (e, x) => { e.value = x; }, v);
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  assert.match(page.url(), /\/sprt-calc\?elo0=0&elo1=2&alpha=0.05&beta=0.1&elo=1.5$/);
  const cli = execFileSync(join(BIN, 'xqf-tune'), ['stats', '--expected', '--elo0', '0', '--elo1', '2', '--alpha',
    '0.05', '--beta', '0.1', '--elo', '1.5'], { stdio: ['ignore', 'pipe', log] }).toString();
  const cell = (k) => page.$eval(`td[data-k="${k}"]`, (e) => e.textContent);
  assert.equal(await cell('elo-pairs'), cli.match(/Expected pairs: (\S+)/)[1]);
  assert.equal(await cell('elo-pass'), cli.match(/Pass probability: (.+)/)[1]);
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'sprt-calc.png'), fullPage: true });
  await page.goto(`${url}/sprt-calc?elo0=3&elo1=1`);
  assert.match(await page.$eval('#err-elo1', (e) => e.textContent), /elo1 \(1\) must be above elo0 \(3\)/);
  await page.close();
});

test("the engines page lists ours; an admin's form adds one, a bad regex is named beside its field", { skip }, async () => {
  const page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  await login(page, 'ada', 'adminpass1');
  await page.goto(`${url}/engines`);
  assert.ok(await page.$('a[href="/engines/xqf"]'), 'our engine is not listed');
  await page.type('#f-name', 'pika');
  await page.type('#f-repo', 'https://example.org/pikafish.git');
  await page.$eval('#f-bench_nodes', (e) => { e.value = 'Nodes'; });
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  const beside = await page.$eval('#err-bench_nodes', (e) => e.parentElement.querySelector('input').id);
  assert.equal(beside, 'f-bench_nodes');
  await page.$eval('#f-bench_nodes', (e) => { e.value = 'Nodes searched *: *([0-9]+)'; });
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  assert.match(await page.$eval('#notice', (e) => e.textContent), /Added the engine pika/);
  assert.ok(await page.$('a[href="/engines/pika"]'), 'the new engine is not listed');
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'engines.png'), fullPage: true });
  // the SPSA form offers the registered engines to its engine field (a datalist)
  await page.goto(`${url}/new/spsa`);
  assert.equal(await page.$eval('#f-engine', (e) => e.getAttribute('list')), 'engines');
  const offered = await page.$$eval('datalist#engines option', (os) => os.map((o) => o.value));
  assert.ok(offered.includes('xqf') && offered.includes('pika'), offered.join(','));
  if (process.env.XQF_SCREENSHOTS) {
    await page.focus('#f-engine');
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'new-spsa.png'), fullPage: true });
  }
  await page.close();
});

test("a viewer has no Stop button and the POST is refused with 403", { skip }, async () => {
  const page = await browser.newPage();
  await login(page, 'vic', 'viewpass1');
  await page.goto(`${url}/runs/${run}`);
  assert.equal(await page.$('div.actions button.danger'), null, 'a viewer sees a Stop button');
  const status = await page.evaluate(async (id) => {
    const csrf = document.querySelector('input[name=csrf]').value;
    const r = await fetch(`/runs/${id}/stop`, { method: 'POST', body: new URLSearchParams({ csrf }) });
    return r.status;
  }, run);
  assert.equal(status, 403);
  await page.goto(`${url}/runs/${run}`);
  assert.equal(await page.$eval('[data-k="state"]', (e) => e.textContent), 'active');
  await page.close();
});

test('a bad form shows the message next to the field and creates nothing; a good one waits for approval',
     { skip }, async () => {
  const page = await browser.newPage();
  await login(page, 'tess', 'testpass1');
  const count = async () => (await (await fetch(`${url}/runs`)).text()).split('data-run=').length;
  const before = await count();
  await page.goto(`${url}/new/sprt`);
  await page.type('#f-name', 'tess test');
  await page.type('#f-test', 'NoSuchParam=1');
  await page.type('#f-nodes', '300');
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  const msg = await page.$eval('#err-test', (e) => e.textContent);
  assert.match(msg, /NoSuchParam/);
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'new-sprt-error.png'), fullPage: true });
  const beside = await page.$eval('#err-test', (e) => e.parentElement.querySelector('input').id);
  assert.equal(beside, 'f-test', 'the message is not next to its field');
  assert.equal(await count(), before, 'a bad form created a run');
  await page.$eval('#f-test', (e) => { e.value = 'NullR=2'; });
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  assert.match(page.url(), /\/runs\/\d+$/);
  pendingRun = page.url().split('/').pop();
  assert.equal(await page.$eval('[data-k="state"]', (e) => e.textContent), 'pending');
  // every kind has its form, from the kind table (the data run's own fields among them)
  await page.goto(`${url}/new/data`);
  assert.ok(await page.$('#f-random_plies'), 'the data form has no random plies field');
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'new-data.png'), fullPage: true });
  await page.close();
  // an admin approves it from the page
  const admin = await browser.newPage();
  await login(admin, 'ada', 'adminpass1');
  await admin.goto(`${url}/runs/${pendingRun}`);
  await Promise.all([admin.waitForNavigation(), admin.click(`form[action="/runs/${pendingRun}/approve"] button`)]);
  assert.equal(await admin.$eval('[data-k="state"]', (e) => e.textContent), 'active');
  const audit = await admin.$eval('table.audit', (t) => t.textContent);
  assert.match(audit, /tess.*create/s);
  assert.match(audit, /ada.*approve/s);
  await admin.close();
});

test('a preset chosen in the picker fills the new-run form; a field typed beside it overrides it',
     { skip }, async () => {
  const page = await browser.newPage();
  await login(page, 'tess', 'testpass1');
  await page.goto(`${url}/new/sprt`);
  await page.select('#p-preset', 'STC');
  await Promise.all([page.waitForNavigation(), page.click('form.preset button')]);
  assert.match(page.url(), /preset=STC/);
  assert.equal(await page.$eval('#f-tc', (e) => e.value), '10+0.1');
  assert.equal(await page.$eval('#f-elo1', (e) => e.value), '5');
  assert.match(await page.$eval('#preset-notice', (e) => e.textContent), /STC/);
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'new-sprt-preset.png'), fullPage: true });
  await page.close();
});

test('a tester\'s test of git refs waits for approval, then for its builds; its page follows the builder live',
     { skip }, async () => {
  const page = await browser.newPage();
  await login(page, 'tess', 'testpass1');
  await page.goto(`${url}/new/sprt`);
  await page.type('#f-name', 'tess refs');
  await page.type('#f-test_ref', 'topic');
  await page.type('#f-base_ref', 'main');
  await page.type('#f-nodes', '300');
  await Promise.all([page.waitForNavigation(), page.click('form.new:not(.preset) button')]);
  assert.match(page.url(), /\/runs\/\d+$/);
  const id = page.url().split('/').pop();
  // nothing of a tester's branch is built before an admin approves it (building it runs its code)
  assert.equal(await page.$eval('[data-k="state"]', (e) => e.textContent), 'pending');
  assert.equal(await page.$eval('[data-k="build-test"]', (e) => e.textContent), 'waiting for approval');
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'run-waiting-approval.png'), fullPage: true });
  // the builder reads each ref's commit (xqf_build_pin, as its pass does) and the admin approves those commits
  const test = 'a'.repeat(40), base = 'b'.repeat(40);
  psql(db, `SELECT xqf_build_pin(id, CASE side WHEN 'test' THEN '${test}' ELSE '${base}' END, 'a subject', NULL)
              FROM build_requests WHERE run_id = ${id}`);
  await page.reload();
  assert.match(await page.$eval('body', (e) => e.textContent), /aaaaaaaaaaaa/);
  psql(db, `SELECT xqf_approve(${id}, '${test}', '${base}')`);
  await page.reload();
  assert.equal(await page.$eval('[data-k="state"]', (e) => e.textContent), 'building');
  assert.equal(await page.$eval('[data-k="build-test"]', (e) => e.textContent), 'queued');
  await page.waitForSelector('#live.live-on');
  // the builder (here its SQL, as xqf-tune build --serve calls it) takes the test's ref: pushed to the page
  psql(db, "SELECT * FROM xqf_build_claim('browser:1', 3600)");
  await page.waitForFunction(() => document.querySelector('[data-k="build-test"]').textContent === 'building',
                             { timeout: 5000 });
  if (process.env.XQF_SCREENSHOTS)
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'run-building.png'), fullPage: true });
  // and fails it: the page reloads with the run failed and the reason
  const reloaded = page.waitForNavigation({ timeout: 5000 });
  psql(db, `SELECT xqf_build_done((SELECT id FROM build_requests WHERE run_id = ${id} AND side = 'test'), NULL,
                                  'unknown ref ''topic''')`);
  await reloaded;
  assert.equal(await page.$eval('[data-k="state"]', (e) => e.textContent), 'failed');
  const builds = await page.$eval('table.builds', (t) => t.textContent);
  assert.match(builds, /unknown ref 'topic'/);
  await page.close();
});

test("a tester uploads a net through the form; it waits, then an admin approves it", { skip }, async () => {
  // the committed default net, registered by the operator and named by a run; a variant of it uploaded (its
  // last byte, an output bias, changed: another SHA-256, a file the engine's reader still takes)
  const net = join(import.meta.dirname, '..', '..', 'engine', 'nets', 'default.nnue');
  tune(['net', 'add', net, '--name', 'xqf-default.nnue', '--provenance',
        'engine/nets/default.nnue: the third generation (docs/nnue.md)']);
  tune(['sprt', 'new', '--test-net', 'xqf-default.nnue', '--base-net', 'none', '--nodes', '300', '--max-pairs', '10',
        '--priority', '-10', '--name', 'the default net against the hand-crafted evaluation']);
  const bytes = readFileSync(net);
  bytes[bytes.length - 1] ^= 1;
  const variant = join(dir, 'variant.nnue');
  writeFileSync(variant, bytes);
  const page = await browser.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  await login(page, 'tess', 'testpass1');
  await page.goto(`${url}/nets`);
  await (await page.$('#net-upload input[type=file]')).uploadFile(variant);
  await page.type('#net-upload input[name=name]', 'tess-variant.nnue');
  await page.type('#net-upload textarea[name=provenance]', 'the default net, one output bias moved (a test)');
  await Promise.all([page.waitForNavigation(), page.click('#net-upload button')]);
  assert.match(await page.$eval('#notice', (e) => e.textContent), /Uploaded tess-variant\.nnue: it waits/);
  assert.equal(await page.$eval('#net-tess-variant\\.nnue .net-state', (e) => e.textContent), 'waiting');
  assert.equal(await page.$('#net-tess-variant\\.nnue a[href$="/download"]'), null, 'a tester sees no file');
  assert.equal(await page.$('form[action$="/approve"]'), null, 'a tester sees no approval');
  await login(page, 'ada', 'adminpass1');
  await page.goto(`${url}/nets`);
  if (process.env.XQF_SCREENSHOTS)    // an admin's view: the upload waits, with its button and its file
    await page.screenshot({ path: join(process.env.XQF_SCREENSHOTS, 'nets.png'), fullPage: true });
  await Promise.all([page.waitForNavigation(), page.click('form[action="/nets/tess-variant.nnue/approve"] button')]);
  assert.equal(await page.$eval('#net-tess-variant\\.nnue .net-state', (e) => e.textContent), 'approved');
  assert.match(await page.$eval('#net-xqf-default\\.nnue .net-run-list', (e) => e.textContent),
               /\d+ pending|\d+ active/);
  assert.match(await page.$eval('#default-net', (e) => e.textContent), /registered as xqf-default\.nnue/);
  await page.close();
});
