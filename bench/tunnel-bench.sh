#!/usr/bin/env bash
# Loopback benchmark of the Portage tunnel against direct TCP and `ssh -L` (see docs/benchmarks-tunnel.md).
# Builds bench/target/benchmarks.jar when it is missing or older than the sources, starts a private
# sshd on a high loopback port (generated host key, one authorized key, all in a temp dir), runs
# dev.portage.bench.tunnel.TunnelBenchmark and prints its Markdown report on stdout.
# Extra arguments go to the harness: --bytes MiB (1024) --dials N (2000) --idle N (10000)
# --routes direct,connect,connect-tls,grpc,grpc1,grpcgo,ssh (connect-tls: HTTP CONNECT with TLS on the client's
# connection and on the agent link, a BoringSSL client doing a full handshake per connection; it also adds the GET
# table: connect + one GET to nginx straight, through the plaintext and the TLS tunnel, against one TLS handshake +
# GET straight to nginx as the floor; --get-dials N (2000) --get-warmup N (5000) --tls-key ec|rsa (ec: P-256);
# --tls-groups LIST: TLS key-exchange groups of both relays (--tls-key-exchange-groups) and of the harness's TLS client,
# e.g. x25519,secp256r1 to match the nginx floor (Debian's OpenSSL 3.0 has no X25519MLKEM768; x25519 alone makes it
# refuse the handshake with the ec key, whose P-256 curve the client must list); default: BoringSSL's, X25519MLKEM768 first;
# nginx from Debian (apt-get install nginx), started by the harness on two loopback ports; grpc: Proxy streams on one shared channel; grpc1: a new channel per
# connection, as upstream's konnectivity-client does; grpcgo: the gRPC frontend with a grpc-go client, the library
# kube-apiserver's konnectivity client uses: `e2e/konnectivity-go bench -serve` in its own process, one connection, a
# Proxy stream per dial, built here with Debian's Go and grpc-go 1.33 (apt-get install golang-go
# golang-google-grpc-dev golang-google-protobuf-dev); grpc1 and grpcgo are not in the default set)
# --go-cpuprofile FILE (a Go CPU profile of the grpcgo client's whole run, for `go tool pprof`)
# --go-heap-mib N (default 0: the grpcgo client keeps N MiB live, so its GC runs per byte as rarely as in a process with a
# real heap such as kube-apiserver; with an empty heap Go collects every ~4 MiB received)
# --queue-mib N (server per-connection queue; default 4)
# --grpc-window BYTES (the gRPC clients' HTTP/2 window; 0 = the library's default, default: grpc-java 1 MiB,
# grpc-go 64 KiB, both with BDP auto-tuning)
# --warmup-mib N (1024: per-route warm-up before measuring, so the JIT is done compiling)
# --jit-rounds N (8: at most this many extra warm-up rounds until the relays' JIT goes quiet; 0 = off).
# --warmup-dials N (20000 per route, interleaved, before the measured dials: with 3000 the relays' JIT was still
# compiling the dial path and set its p99; see docs/benchmarks-tunnel.md).
# Dials run last, all routes interleaved in 20 blocks; the dial table adds p99.9, max, and per dial the
# context switches and CPU time of the route's processes (relays, backend; ssh and sshd for ssh -L).
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
jar="$root/bench/target/benchmarks.jar"

die() { echo "tunnel-bench: $*" >&2; exit 1; }

find_java() {
  local c
  for c in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java "$(command -v java || true)"; do
    [[ -x $c ]] || continue
    v=$("$c" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [[ ${v%%.*} -ge 21 ]]; then echo "$c"; return; fi
  done
  die "no JDK 21+ found (set JAVA_HOME)"
}

for tool in ssh ssh-keygen /usr/sbin/sshd; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian: apt-get install openssh-server openssh-client)"
done
java=$(find_java)

if [[ ! -f $jar ]] || [[ -n $(find "$root"/{core,api,tunnel,bench}/src "$root/bench/pom.xml" -newer "$jar" -type f -print -quit) ]]; then
  echo "tunnel-bench: building $jar" >&2
  (cd "$root" && mvn -B -q -pl bench -am package -DskipTests) >&2
fi

if [[ ,$*, == *connect-tls* ]] && ! [[ -x /usr/sbin/nginx ]]; then
  die "route connect-tls needs nginx for its GET table (Debian: apt-get install nginx)"
fi

# Route grpcgo: build the grpc-go client as GoPeer (tunnel's interop tests) does, from Debian's GOPATH sources, offline.
go_args=()
routes=
prev=
for a in "$@"; do
  [[ $prev == --routes ]] && routes=$a
  prev=$a
done
if [[ ,$routes, == *,grpcgo,* ]]; then
  gopath=/usr/share/gocode
  go=$(command -v go || echo /usr/lib/go/bin/go)
  [[ -x $go && -d $gopath/src/google.golang.org/grpc && -d $gopath/src/google.golang.org/protobuf ]] \
    || die "route grpcgo needs Go and Debian's grpc-go sources in $gopath (apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev)"
  gobin="$root/bench/target/konnectivity-go/konnectivity-go"
  mkdir -p "$(dirname "$gobin")"
  (cd "$root/e2e/konnectivity-go" && GO111MODULE=off GOPATH=$gopath GOFLAGS= \
    GOCACHE=${GOCACHE:-$root/bench/target/konnectivity-go/cache} "$go" build -o "$gobin" .) >&2 \
    || die "go build of e2e/konnectivity-go failed"
  go_args=(--go-client "$gobin")
fi

tmp=$(mktemp -d /tmp/tunnel-bench.XXXXXX)
sshd_pid=
cleanup() {
  [[ -n $sshd_pid ]] && kill "$sshd_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/client_key"
cp "$tmp/client_key.pub" "$tmp/authorized_keys"
chmod 600 "$tmp/authorized_keys" "$tmp/host_key" "$tmp/client_key"

# A free high port: ask the kernel for one, then hand it to sshd.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
  || shuf -i 40000-49999 -n 1)
cat >"$tmp/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding yes
CFG
mkdir -p /run/sshd 2>/dev/null || true   # privilege separation directory sshd insists on
/usr/sbin/sshd -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.log" &
sshd_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$sshd_pid" 2>/dev/null || die "sshd did not start: $(cat "$tmp/sshd.log")"
  sleep 0.1
done

"$java" -Xmx2g --enable-native-access=ALL-UNNAMED -cp "$jar" dev.portage.bench.tunnel.TunnelBenchmark \
  --sshd-port "$port" --ssh-key "$tmp/client_key" --ssh-user "$(id -un)" --sshd-pid "$sshd_pid" --logs "$tmp/logs" "${go_args[@]}" "$@"
