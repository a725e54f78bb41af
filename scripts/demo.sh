#!/bin/sh
# `make demo`: a private race server, three bots racing on one checked deal
# (a secret deal the server's solver proved winnable), and the spectator view
# in this terminal. The race allows hints: ann follows the server's hints from
# the first move, bob plays greedily and follows hints once stuck (both are
# marked † as played with help), cy plays greedily alone and usually gives up.
# Quit the viewer (q) to stop it all.
set -eu
BIN=${BIN:-.venv/bin}
PORT=${DEMO_PORT:-8765}
PACE=${DEMO_PACE:-0.4}
VARIANT=${DEMO_VARIANT:-forty-thieves}
URL="http://127.0.0.1:$PORT"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/thieves-demo.XXXXXX")
PIDS=""
cleanup() {
    for pid in $PIDS; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

# --hint-interval 0: a bot asks for a hint before each of its moves, paced by --pace.
"$BIN/thieves-server" --port "$PORT" --data-dir "$DIR/redis" --countdown 3 --hint-interval 0 \
    >"$DIR/server.log" 2>&1 &
PIDS="$!"
i=0
until "$BIN/python" -c "import urllib.request,sys; urllib.request.urlopen('$URL/health', timeout=1)" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 100 ]; then echo "demo: the server did not start; its log:" >&2; cat "$DIR/server.log" >&2; exit 1; fi
    sleep 0.1
done

"$BIN/thieves" create --server "$URL" --variant "$VARIANT" --seats 3 --time-limit 600 --pool --hints >"$DIR/race.txt"
CODE=$(sed -n 's/^join code: *//p' "$DIR/race.txt")
TOKEN=$(sed -n 's/^creator token: *//p' "$DIR/race.txt")
echo "demo: race $CODE on a checked deal of $VARIANT at $URL (logs in $DIR)"

"$BIN/thieves" bot "$CODE" --server "$URL" --name ann --pace "$PACE" --hints always --creator-token "$TOKEN" --start-when 3 >"$DIR/ann.log" 2>&1 &
PIDS="$PIDS $!"
"$BIN/thieves" bot "$CODE" --server "$URL" --name bob --pace "$PACE" --hints stuck --wander 0.1 >"$DIR/bob.log" 2>&1 &
PIDS="$PIDS $!"
"$BIN/thieves" bot "$CODE" --server "$URL" --name cy --pace "$PACE" --wander 0.3 >"$DIR/cy.log" 2>&1 &
PIDS="$PIDS $!"

"$BIN/thieves" watch "$CODE" --server "$URL"
