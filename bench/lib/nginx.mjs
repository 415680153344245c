// The anchor a user would pick instead of the proxy: nginx with proxy_cache in
// front of the node. This file finds the binary and writes its configuration;
// proc/nginx.mjs runs it. One worker, no access log, every path of its own in a
// temporary prefix (no root needed, nothing of /etc/nginx or /var/lib/nginx used).
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The nginx binary: on the PATH, or Debian's /usr/sbin/nginx (not on a user's PATH); null when neither. */
export function findNginx() {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin'];
  for (const dir of dirs) {
    const file = join(dir, 'nginx');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return null;
}

/** `nginx -v`'s version, e.g. "nginx/1.22.1" (it prints it to stderr); null when it does not run. */
export function nginxVersion(bin) {
  const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return r.status === 0 ? `${r.stderr}${r.stdout}`.trim().replace(/^nginx version: /, '') : null;
}

/**
 * nginx.conf for a cache in front of `upstream` (http://host:port) or, with `cache`
 * false, a plain `proxy_pass` (what the miss scenario compares against), listening on
 * 127.0.0.1:`port`, everything under `dir`. POST answers are cached by
 * `$request_uri|$request_body` (`proxy_cache_methods POST`; the body buffer is
 * large enough that every body is in memory, where $request_body can read it),
 * GET answers by `$request_uri`. Keep-alive as long as the proxy keeps it (nginx's
 * default closes a connection after 1,000 requests). The upstream's caching headers are
 * ignored: the sim's answers at a pinned version never change, as the proxy knows.
 */
export function nginxConf({ port, upstream, dir, runAsRoot = false, cache = true }) {
  const node = new URL(upstream);
  const caching = cache
    ? `
      proxy_cache ledger;
      proxy_cache_methods GET HEAD POST;
      proxy_cache_key $ledger_cache_key;
      proxy_cache_valid 200 1d;
      proxy_ignore_headers Cache-Control Expires Set-Cookie Vary X-Accel-Expires;
      add_header X-Cache $upstream_cache_status;`
    : '';
  return `# written by bench/lib/nginx.mjs
${runAsRoot ? 'user root;\n' : ''}worker_processes 1;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65s;
  keepalive_requests 100000000;
  client_body_buffer_size 64k;
  client_max_body_size 64k;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=ledger:32m max_size=2g inactive=1d use_temp_path=off;
  upstream node {
    server ${node.hostname}:${node.port};
    keepalive 16;
  }
  map $request_method $ledger_cache_key {
    POST "$request_uri|$request_body";
    default $request_uri;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://node;
      proxy_http_version 1.1;
      proxy_set_header Connection "";${caching}
    }
  }
}
`;
}
