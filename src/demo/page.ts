// The demo page: what a wallet developer opens first. Served on its own origin,
// it reads an account's balance and resources through the proxy with plain
// fetch() and credentials, as a web wallet does, and shows for each call its
// status, X-Cache, cache tier and ledger version: the second read of the same
// version is the proxy's cache answering. No build step and no dependency: the
// script is inline.

/** Where the page's script reads its settings: JSON in a script element, safe for any URL. */
export interface DemoPageSettings {
  /** the proxy, http(s)://host:port without /v1 */
  proxyUrl: string;
  /** the account read first */
  account: string;
}

/** The demo page, with `settings` inlined. */
export function demoPage(settings: DemoPageSettings): string {
  // '<' escaped so that no value can close the script element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ledger-proxy from a browser</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
  code, td { font-family: ui-monospace, monospace; font-size: 13px; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
  th, td { border-bottom: 1px solid #ddd; padding: .3rem .5rem; text-align: left; }
  .HIT { color: #07672c; font-weight: 600; } .MISS { color: #9a5b00; } .failed { color: #b00020; }
  input { width: 36rem; font-family: ui-monospace, monospace; }
</style>
</head>
<body>
<h1>ledger-proxy from a browser</h1>
<p>This page is served from <code id="origin"></code> and calls the proxy at <code id="proxy"></code>:
another origin, so every call goes through CORS, as a web wallet's does.</p>
<form id="form"><label>Account <input id="account" spellcheck="false"></label> <button>Read</button></form>
<p id="summary"></p>
<table><thead><tr><th>#</th><th>call</th><th>status</th><th>X-Cache</th><th>tier</th><th>ledger version</th><th>ms</th></tr></thead>
<tbody id="calls"></tbody></table>
<p>Resources: <span id="resources"></span></p>
<p>The first read of a version is a <span class="MISS">MISS</span> (the proxy asks a node); reading the same
version again is a <span class="HIT">HIT</span>, served from the proxy's cache. GET /v1 always passes through
(<code>BYPASS</code>). With the Aptos SDK, point <code>fullnode</code> at <code><span class="proxy"></span>/v1</code>.</p>
<script type="application/json" id="settings">${json}</script>
<script>
${PAGE_SCRIPT}
</script>
</body>
</html>
`;
}

// Plain browser JavaScript (no build step): it runs as written.
const PAGE_SCRIPT = `
const settings = JSON.parse(document.getElementById('settings').textContent);
const proxy = new URLSearchParams(location.search).get('proxy') || settings.proxyUrl;
const coin = '0x1::aptos_coin::AptosCoin';
const rows = document.getElementById('calls');
document.getElementById('origin').textContent = location.origin;
document.getElementById('proxy').textContent = proxy;
for (const el of document.querySelectorAll('.proxy')) el.textContent = proxy;
document.getElementById('account').value = settings.account;

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
}

/** The X-*-LEDGER-VERSION header, whatever the vendor; null when the proxy does not expose it. */
function ledgerVersion(res) {
  for (const [name, value] of res.headers) if (name.endsWith('-ledger-version')) return value;
  return null;
}

async function call(label, path) {
  const row = rows.insertRow();
  cell(row, String(rows.rows.length));
  cell(row, label);
  const started = performance.now();
  try {
    const res = await fetch(proxy + path, { credentials: 'include' });
    const text = await res.text();
    const cache = res.headers.get('x-cache');
    cell(row, String(res.status), res.ok ? '' : 'failed');
    cell(row, cache ?? '(not readable)', cache ?? 'failed');
    cell(row, res.headers.get('x-cache-tier') ?? '');
    cell(row, ledgerVersion(res) ?? '(not readable)');
    cell(row, (performance.now() - started).toFixed(1));
    if (!res.ok) throw new Error(label + ': ' + res.status + ' ' + text);
    return text;
  } catch (err) {
    if (row.cells.length === 2) cell(row, 'blocked', 'failed');
    throw err instanceof TypeError ? new Error(label + ': the browser refused the reply (CORS): does the proxy allow the origin ' + location.origin + '?') : err;
  }
}

async function read(account) {
  rows.replaceChildren();
  document.body.dataset.state = 'reading';
  const info = JSON.parse(await call('ledger info', '/v1'));
  const at = '?ledger_version=' + info.ledger_version;
  const balancePath = '/v1/accounts/' + account + '/balance/' + coin + at;
  const resourcesPath = '/v1/accounts/' + account + '/resources' + at;
  // A balance can exceed 2^53: kept as the text the node wrote.
  const balance = await call('balance', balancePath);
  const resources = JSON.parse(await call('resources', resourcesPath));
  await call('balance, same version', balancePath);
  await call('resources, same version', resourcesPath);
  document.getElementById('summary').textContent = account + ' holds ' + balance + ' octas of ' + coin + ' at ledger version ' + info.ledger_version + ' (chain ' + info.chain_id + ').';
  document.getElementById('resources').textContent = resources.map((r) => r.type).join(', ');
}

function run() {
  read(document.getElementById('account').value.trim()).then(
    () => (document.body.dataset.state = 'done'),
    (err) => {
      document.getElementById('summary').textContent = String(err.message || err);
      document.getElementById('summary').className = 'failed';
      document.body.dataset.state = 'failed';
    },
  );
}

document.getElementById('form').addEventListener('submit', (event) => {
  event.preventDefault();
  document.getElementById('summary').className = '';
  run();
});
run();
`;
