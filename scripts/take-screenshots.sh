#!/usr/bin/env bash
# Pictures of the app's states, taken from the real `ember` under an Xvfb of its own and driven
# with xdotool (clicks found by OCR with tesseract), into <build>/screenshots/ (never docs/:
# scripts/refresh-screenshots.sh copies what the README shows). Each run starts from fresh data
# folders under the build folder. The states: a model loading with its percentage, the context
# meter over a typed draft, a folded reasoning section (the conversation is imported from a JSON
# export, as no reference model thinks), the sidebar's export menu, the presets in the settings
# panel, the Korean UI, and a code answer while it streams and once it is finished. Typing at once, reading a long prompt and Undo after a delete are
# taken by test_ui_as_a_person (<build>/bin/ui-person/).
# Usage: scripts/take-screenshots.sh [build folder]   Needs: Xvfb xdotool imagemagick tesseract
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="$build/screenshots"
models="${EMBER_MODELS_DIR:-$HOME/.cache/ember/models}"
small="$models/SmolLM2-135M-Instruct.Q4_1.gguf"
larger="$models/gemma-3-270m-q4_k_m.gguf"
rm -rf "$out" && mkdir -p "$out/data"

display=""
for n in $(seq 90 130); do
  if [ ! -e "/tmp/.X11-unix/X$n" ] && [ ! -e "/tmp/.X$n-lock" ]; then display=":$n"; break; fi
done
[ -n "$display" ] || { echo "no free X display" >&2; exit 1; }
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
app=""
stop_app() { if [ -n "$app" ]; then kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; app=""; fi; }
trap 'stop_app; kill $xvfb 2>/dev/null || true' EXIT
export DISPLAY="$display"
sleep 1

shot() { import -window root "$out/$1.png"; echo "$out/$1.png"; }
# Clicks (button $2, default 1) the middle of the first word OCR reads as $1 on the screen.
click_word() {
  import -window root "$out/look.png"
  local at
  at=$(tesseract "$out/look.png" - --psm 11 tsv 2>/dev/null |
       awk -F'\t' -v w="$1" '!found && $12 == w { print int($7 + $9 / 2), int($8 + $10 / 2); found = 1 }')
  [ -n "$at" ] || { echo "OCR found no \"$1\"" >&2; return 1; }
  xdotool mousemove $at click "${2:-1}"
}
# Starts ember on model $2 with the data folder $1; extra environment after.
start_app() {
  local data="$out/data/$1" model="$2"; shift 2
  mkdir -p "$data"
  env XDG_DATA_HOME="$data" XDG_CONFIG_HOME="$data/config" EMBER_MODELS_DIR="$models" \
      QT_QPA_PLATFORM=xcb "$@" "$build/bin/ember" --model "$model" >"$data/app.log" 2>&1 &
  app=$!
  local window
  window=$(xdotool search --sync --onlyvisible --name '^Ember' | head -1)
  xdotool windowfocus --sync "$window"
}
wait_for_log() {  # the app log of data folder $1 says $2 (up to 120 s)
  for _ in $(seq 1 240); do
    grep -qs "$2" "$out/data/$1/app.log" "$out/data/$1"/ember/logs/*.log && return 0
    sleep 0.5
  done
  echo "the app never logged \"$2\"" >&2; return 1
}

# 1. Loading a model: the bar with its percentage and Cancel. The larger model is chosen in
#    the model picker once the small one is loaded (at start-up the load can end before the
#    window shows); quick dumps every 0.05 s, the ones showing the bar are kept.
start_app load "$small"
wait_for_log load "model loaded"
xdotool mousemove 120 12 click 1  # the model button, left of the window's top row
sleep 1.5
import -window root "$out/look.png"
name="$(basename "$larger" | cut -d- -f1)"  # "gemma": OCR may cut the file name elsewhere
at=$(tesseract "$out/look.png" - --psm 11 tsv 2>/dev/null |
     awk -F'\t' -v w="$name" '!found && index($12, w) == 1 { print int($7 + $9 / 2), int($8 + $10 / 2); found = 1 }')
[ -n "$at" ] || { echo "OCR found no $name file in the model list" >&2; exit 1; }
xdotool mousemove $at click 1
for i in $(seq 1 60); do xwd -root -silent >"$out/load-$i.xwd"; sleep 0.05; done  # fast dumps
for i in $(seq 1 60); do convert "xwd:$out/load-$i.xwd" "$out/load-$i.png"; rm "$out/load-$i.xwd"; done
kept=0
for i in $(seq 1 60); do  # keep the ones showing the bar (its Cancel button)
  if tesseract "$out/load-$i.png" - 2>/dev/null | grep -q "Cancel"; then
    kept=$((kept + 1)); mv "$out/load-$i.png" "$out/1-load-progress-$(printf %02d "$i").png"
  else rm -f "$out/load-$i.png"; fi
done
echo "$kept pictures of the load bar: $out/1-load-progress-*.png"
stop_app

# 2. The context meter over a typed draft (nothing sent).
start_app meter "$small"
wait_for_log meter "model loaded"
xdotool type --delay 15 "Explain in three sentences why the sky is blue, and give one example."
sleep 2
shot 2-context-meter
stop_app

# 3. Folded reasoning: a conversation imported with its reasoning, then opened.
cat >"$out/data/reasoning.json" <<'JSON'
{"format": "ember-chat-export", "version": 1, "conversations": [{
  "title": "Why is the sky blue?", "createdAtMs": 1764590000000, "updatedAtMs": 1764590060000,
  "modelPath": "", "settings": {}, "pinned": false, "activeLeafId": 2,
  "messages": [
    {"id": 1, "parentId": null, "role": "user", "status": "complete",
     "content": "Why is the sky blue?", "createdAtMs": 1764590000000},
    {"id": 2, "parentId": 1, "role": "assistant", "status": "complete",
     "content": "Sunlight is scattered by the molecules of the air, and blue light, with its shorter wavelength, is scattered much more than red light.",
     "createdAtMs": 1764590001000, "model": "a thinking model", "finishReason": "stop",
     "reasoning": "The question is about Rayleigh scattering. Scattering goes as one over the wavelength to the fourth power, so blue (about 450 nm) scatters several times more than red (about 700 nm).",
     "reasoningMs": 4200}]}]}
JSON
start_app reasoning "$small"  # once, to create its database
wait_for_log reasoning "model loaded"
stop_app
"$build/bin/ember-cli" import --db "$out/data/reasoning/ember/ember.sqlite" \
    --file "$out/data/reasoning.json"
rm -f "$out"/data/reasoning/ember/logs/*.log
start_app reasoning "$small"
wait_for_log reasoning "model loaded"
click_word "sky"
sleep 1
shot 3-reasoning-folded
click_word "Thought"
sleep 1
shot 4-reasoning-unfolded
# 5. The sidebar's menu of that conversation: pin, rename, export, delete.
click_word "Dec" 3  # the conversation's date in the sidebar
sleep 1
shot 5-export-menu
xdotool key Escape
# 6. The presets, in the settings panel.
click_word "Settings"
sleep 1
shot 6-presets-settings
stop_app

# 7. The Korean UI (the desktop's locale), with a draft in the composer.
start_app korean "$small" LANG=ko_KR.UTF-8 LC_ALL=ko_KR.UTF-8 LANGUAGE=ko
wait_for_log korean "model loaded"
xdotool type --delay 15 "Hello in Korean, please."
sleep 2
shot 7-korean
stop_app
# 8. A code answer: while its fence is open the block grows as plain text; once it closes (or
#    the answer ends) it is coloured by source-highlight. Quick dumps while it streams, then
#    the finished answer (its stats line read by OCR says when).
start_app code "$small"
wait_for_log code "model loaded"
xdotool type --delay 15 "Write a Python function that returns the square of a number."
xdotool key Return
for i in $(seq 1 30); do xwd -root -silent >"$out/code-$i.xwd"; sleep 0.2; done
for _ in $(seq 1 60); do
  shot 9-code-finished >/dev/null
  tesseract "$out/9-code-finished.png" - 2>/dev/null | grep -q "tok/s" && break
  sleep 2
done
for i in $(seq 1 30); do  # keep the streaming ones that show a code box (its "python" label)
  convert "xwd:$out/code-$i.xwd" "$out/code-$i.png"; rm "$out/code-$i.xwd"
  if tesseract "$out/code-$i.png" - 2>/dev/null | grep -q "python"; then
    mv "$out/code-$i.png" "$out/8-code-streaming-$(printf %02d "$i").png"
  else rm -f "$out/code-$i.png"; fi
done
echo "$out/8-code-streaming-*.png $out/9-code-finished.png"
stop_app
rm -f "$out/look.png"
