# Remote cache servers for the e2e tests, on 127.0.0.1 with a free port, with their own config
# and data in $T, each under `timeout` (a bounded lifetime even if the test dies) and stopped by
# stop_servers (the caller's EXIT trap). Sourced after common.bash.
# need_servers: exits 77 (skipped) when nginx or redis-server is missing and cannot be installed.
SERVER_PIDS=()

need_servers() {
  local missing=()
  [ -x /usr/sbin/nginx ] || missing+=(nginx-core)
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server)
  command -v curl >/dev/null || missing+=(curl)
  ((${#missing[@]})) || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -q --no-install-recommends \
      "${missing[@]}" >/dev/null 2>&1 && return 0
  fi
  echo "SKIP: needs ${missing[*]} (apt-get install ${missing[*]})"
  exit 77
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_until WHAT CMD...: polls CMD (a readiness probe) for at most 10 s.
wait_until() {
  local what=$1
  shift
  for _ in $(seq 100); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "FAIL: $what did not start"
  return 1
}

# start_nginx: a WebDAV store at $HTTP_URL (files in $HTTP_DATA); $NGINX_PID.
start_nginx() {
  local dir="$T/nginx" port
  port=$(free_port)
  mkdir -p "$dir/data/cache" "$dir/tmp" "$dir/logs"
  cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:$port;
    root $dir/data;
    location /cache/ {
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw;
    }
  }
}
EOF
  timeout 600 /usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" 2>>"$dir/logs/stderr" &
  NGINX_PID=$!
  SERVER_PIDS+=("$NGINX_PID")
  HTTP_URL="http://127.0.0.1:$port/cache"
  HTTP_DATA="$dir/data/cache"
  wait_until nginx curl -sf -o /dev/null -X PUT --data ok "$HTTP_URL/probe"
}

# start_redis: a Redis at $REDIS_URL (database 3), port $REDIS_PORT; $REDIS_PID.
start_redis() {
  local dir="$T/redis"
  REDIS_PORT=$(free_port)
  mkdir -p "$dir"
  timeout 600 redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$dir" --save '' \
    --appendonly no --daemonize no --logfile "$dir/log" &
  REDIS_PID=$!
  SERVER_PIDS+=("$REDIS_PID")
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT/3"
  wait_until redis redis-cli -p "$REDIS_PORT" ping
}

# rcli ARGS...: redis-cli on the test's server and database.
rcli() { redis-cli -p "$REDIS_PORT" -n 3 "$@"; }

stop_servers() {
  local p
  for p in "${SERVER_PIDS[@]}"; do
    kill -CONT "$p" 2>/dev/null
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  SERVER_PIDS=()
}
