# Sourced by the scripts that run a client's test suite against probly
# (goredis-suite.sh, redis-tcl-hll.sh):
#
#   . scripts/serve-probly.sh
#   serve_probly NAME WORKDIR
#
# builds probly into WORKDIR, starts `probly serve` on a free loopback
# port with WORKDIR/data as its directory and WORKDIR/server.log as its
# log, waits until it accepts connections, and sets port and pid (the
# caller's cleanup kills pid). It exits 1, showing the log, if the server
# does not come up. --metrics-addr off: the default metrics port may be
# taken by another server on this machine, and the suites need only the
# RESP port.
serve_probly() {
  local name=$1 dir=$2 up=""
  go build -o "$dir/probly" ./cmd/probly
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 16379)
  "$dir/probly" serve --addr "127.0.0.1:$port" --dir "$dir/data" --metrics-addr off >"$dir/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$up" ]; then
    echo "$name: probly serve did not come up on 127.0.0.1:$port" >&2
    cat "$dir/server.log" >&2
    exit 1
  fi
}
