#!/usr/bin/env bash
# Builds the .deb (scripts/package.sh), installs it on this machine with its dependencies,
# checks the installed programs from /usr/bin (ember --version without a display, ember-cli
# inspect on the default model, ember-serve --help, the app under Xvfb until its
# window shows and answers one message), then purges it and checks no file of it is left.
# Needs root (CI machines are throwaway); refuses to replace an ember installed otherwise.
#   scripts/ci-package.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[ "$(id -u)" -eq 0 ] || die "installs a package: run as root (CI) or skip this part"
if dpkg-query -W -f='${Status}' ember 2>/dev/null | grep -q 'install ok installed'; then
  die "an ember package is already installed; remove it first"
fi
"$EMBER_ROOT/scripts/fetch-models.sh"
# On a machine without nvcc (a stock CI machine) the plain build is the CPU build the package
# wants: package from it instead of building everything a second time.
if [ -f "$EMBER_BUILD_DIR/CMakeCache.txt" ] && ! grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=/' "$EMBER_BUILD_DIR/CMakeCache.txt"; then
  export EMBER_PACKAGE_BUILD_DIR="${EMBER_PACKAGE_BUILD_DIR:-$EMBER_BUILD_DIR}"
fi
# package.sh's log (lintian's warnings among it) goes to stderr; its last line is the .deb.
deb="$(bash "$EMBER_ROOT/scripts/package.sh" | tee /dev/stderr | tail -1)"
[ -f "$deb" ] || die "no package was built"
recommends="$(dpkg-deb -f "$deb" Recommends)"
grep -q 'libsecret-1-0' <<<"$recommends" && grep -q 'gnome-keyring' <<<"$recommends" \
  || die "the package does not recommend the keyring's libsecret and service: '$recommends'"
log "installing $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null \
  || die "the package does not install"
files="$(mktemp)"
# However the checks end, the package does not stay installed.
trap 'rm -f "$files"; dpkg-query -W ember >/dev/null 2>&1 && apt-get purge -y -qq ember >/dev/null 2>&1 || true' EXIT
dpkg -L ember | while read -r f; do [ -f "$f" ] && echo "$f"; done >"$files"
for program in ember ember-cli ember-serve; do
  grep -qx "/usr/bin/$program" "$files" || die "the package has no /usr/bin/$program"
done

log "ember --version (no display)"
version="$(env -u DISPLAY -u WAYLAND_DISPLAY /usr/bin/ember --version)" || die "ember --version"
grep -qE '^ember [0-9.]+ \(commit ' <<<"$version" || die "ember --version printed: $version"
grep -q '^ember-cli ' <<<"$(/usr/bin/ember-cli --version)" || die "ember-cli --version"
log "ember-cli inspect on the default model"
inspect="$(/usr/bin/ember-cli inspect "$EMBER_MODELS_DIR/SmolLM2-135M-Instruct.Q4_1.gguf")" \
  || die "ember-cli inspect"
grep -q '^architecture: *llama' <<<"$inspect" || die "ember-cli inspect: no architecture line"
help="$(/usr/bin/ember-serve --help)" || die "ember-serve --help"
grep -q -- '--upstream' <<<"$help" || die "ember-serve --help does not list its options: $help"

log "the app under Xvfb: its window shows and answers"
home="$(mktemp -d)"
out="$home/report"
mkdir -p "$out"
HOME="$home" XDG_DATA_HOME="$home/.local/share" EMBER_TEST_AUTOSEND="Hi" EMBER_TEST_MAX_TOKENS=4 \
  EMBER_TEST_OUTPUT_DIR="$out" timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" /usr/bin/ember \
  || die "the installed app did not start, show its window and answer"
[ -s "$out/report.json" ] && [ -s "$out/screenshot.png" ] || die "the app wrote no report"
rm -rf "$home"

log "purging the package"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ember >/dev/null || die "purge failed"
left=0
while read -r f; do
  if [ -e "$f" ]; then echo "left behind: $f"; left=1; fi
done <"$files"
[ "$left" -eq 0 ] || die "files of the package are left after purge"
log "package: installs, runs and uninstalls cleanly"
