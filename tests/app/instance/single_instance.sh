#!/usr/bin/env bash
# A second `ember` launch with the same data folder brings the first forward and exits 0
# instead of opening the same database a second time. Run by ctest under xvfb-run:
#   single_instance.sh /path/to/ember WORKDIR
# Reference: the first process must still be running afterwards, the second must have exited
# with 0 within 20 s and said so; a data folder of its own is a separate instance.
set -euo pipefail
app="$1"; work="$2"
rm -rf "$work"; mkdir -p "$work"
export HOME="$work" EMBER_MODELS_DIR="$work/no-models"
XDG_DATA_HOME="$work/a" "$app" >"$work/first.log" 2>&1 &
first=$!
trap 'kill $first 2>/dev/null || true; wait $first 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do  # the first instance listens once its data folder exists
  [ -d "$work/a" ] && break
  sleep 0.5
done
sleep 3
XDG_DATA_HOME="$work/a" timeout 20 "$app" >"$work/second.log" 2>&1 || { cat "$work/second.log"; exit 1; }
grep -q "already running" "$work/second.log" || { echo "the second launch did not hand over"; exit 1; }
kill -0 "$first" || { echo "the first instance died"; cat "$work/first.log"; exit 1; }
# Another data folder is another instance: it must not hand over (it is stopped by timeout).
set +e
XDG_DATA_HOME="$work/b" timeout 8 "$app" >"$work/third.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 124 ] || { echo "an instance with its own data folder exited ($rc)"; cat "$work/third.log"; exit 1; }
echo "single instance: ok"
