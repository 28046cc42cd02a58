# What the LinBPQ interop scripts share (sourced after netns-lib.sh and
# netns_pids, with $out, $linklab and $linbpq set):
#
#   line_channel SEED HIDDEN
#       writes $out/channel.toml (stations a-d on KISS ports 8101-8104,
#       38 400 bit/s, HIDDEN the TOML list of the pairs that cannot hear
#       each other) and starts `linklab channel` on it, its monitor log and
#       pcap in $out; exits 1 if it does not start
#   check NAME COMMAND...
#       prints PASS NAME or FAIL NAME as COMMAND succeeds, counting them
#       in $pass and $fail
#
#   bpq NAME CALL ALIAS KISSPORT TELNETPORT HTTPPORT
#       writes $out/NAME/bpq32.cfg (one KISS port on 127.0.0.1:KISSPORT at
#       quality 192, NODES every minute, an application CALL-1 ALIASB, a
#       telnet console with user test/test) and starts linbpq there in the
#       background (its pid appended to pids, its output in linbpq.log)
#   console SECONDS PORT LINE...
#       logs in at the telnet console on PORT, types each LINE and prints
#       ">> LINE" and what came back within SECONDS

# One LinBPQ node: NAME CALL ALIAS KISSPORT TELNETPORT HTTPPORT
bpq() {
    local dir=$out/$1
    mkdir -p "$dir"
    cat >"$dir/bpq32.cfg" <<EOF
SIMPLE
NODECALL=$2
NODEALIAS=$3
LOCATOR=NONE
IDINTERVAL=0
BTINTERVAL=0
NODESINTERVAL=1
OBSINIT=6
OBSMIN=4
MINQUAL=10
L3TIMETOLIVE=25
L4TIMEOUT=60
L4WINDOW=4
PACLEN=236
APPLICATIONS=BBS
APPL1CALL=$2-1
APPL1ALIAS=${3}B
APPL1QUAL=200

PORT
 PORTNUM=1
 ID=linklab channel
 TYPE=ASYNC
 PROTOCOL=KISS
 IPADDR=127.0.0.1
 TCPPORT=$4
 CHANNEL=A
 QUALITY=192
 MINQUAL=10
 MAXFRAME=4
 PACLEN=236
 FRACK=5000
 RESPTIME=1000
 RETRIES=10
 TXDELAY=50
 SLOTTIME=20
 PERSIST=255
ENDPORT

PORT
 PORTNUM=2
 ID=Telnet
 DRIVER=TELNET
 CONFIG
  TCPPORT=$5
  HTTPPORT=$6
  LOGINPROMPT=user:
  PASSWORDPROMPT=password:
  MAXSESSIONS=4
  USER=test,test,$2,,SYSOP
ENDPORT
EOF
    (cd "$dir" && exec "$linbpq" </dev/null >"$dir/linbpq.log" 2>&1) &
    pids+=($!)
}
# Types lines at a LinBPQ console (telnet, user test/test) and prints the
# answers, waiting SECONDS for each: SECONDS PORT LINE...
console() {
    python3 - "$@" <<'EOF'
import socket, sys, time
wait = float(sys.argv[1])
s = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5)
def read(secs):
    got, end = b"", time.time() + secs
    s.settimeout(0.2)
    while time.time() < end:
        try:
            d = s.recv(4096)
        except socket.timeout:
            continue
        if not d:
            break
        got += d
    return got.decode("latin-1").replace("\r", "\n")
read(1); s.sendall(b"test\r"); read(1); s.sendall(b"test\r"); read(1.5)
for line in sys.argv[3:]:
    s.sendall(line.encode() + b"\r")
    print(">>", line)
    print(read(wait))
s.close()
EOF
}


line_channel() { # SEED HIDDEN
    cat >"$out/channel.toml" <<EOF
seed = $1
[[channel]]
name = "vhf"
bitrate = 38400
hidden = $2
[[station]]
name = "a"
port = 8101
[[station]]
name = "b"
port = 8102
[[station]]
name = "c"
port = 8103
[[station]]
name = "d"
port = 8104
EOF
    "$linklab" channel "$out/channel.toml" --monitor --capture "$out/air.pcap" \
        >"$out/channel.log" 2>&1 &
    pids+=($!)
    wait_port 8101 || { echo "$(basename "$0"): the channel did not start" >&2; exit 1; }
}

pass=0 fail=0
check() { # NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "PASS $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
