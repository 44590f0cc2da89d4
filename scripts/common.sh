# Shared helpers for Ember's scripts (sourced, not run). Everything here is idempotent: it
# installs only what is missing and re-uses an existing build folder.

EMBER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EMBER_BUILD_DIR="${EMBER_BUILD_DIR:-$EMBER_ROOT/build}"
export EMBER_MODELS_DIR="${EMBER_MODELS_DIR:-$HOME/.cache/ember/models}"

# Debian packages needed to build and test Ember.
EMBER_DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libsentencepiece-dev libspdlog-dev libsqlite3-dev libpcre2-dev nlohmann-json3-dev
  libcurl4-openssl-dev qtkeychain-qt6-dev
  qt6-base-dev
  qt6-declarative-dev qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtqml-workerscript qml6-module-qtquick-templates
  qml6-module-qtquick-dialogs qml6-module-qtqml libqt6svg6 fonts-noto-cjk xvfb xauth
  python3 python3-pip python3-jinja2 unzip ca-certificates
)

if [ -t 1 ]; then _ember_on=$'\033[1;33m' _ember_err=$'\033[1;31m' _ember_off=$'\033[0m'
else _ember_on='' _ember_err='' _ember_off=''; fi
log() { printf '%s[ember]%s %s\n' "$_ember_on" "$_ember_off" "$*"; }
die() { printf '%s[ember] error:%s %s\n' "$_ember_err" "$_ember_off" "$*" >&2; exit 1; }

ember_install_packages() {
  local missing=()
  for pkg in "${EMBER_DEBIAN_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "system packages: all ${#EMBER_DEBIAN_PACKAGES[@]} present"
    return
  fi
  log "installing system packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" || die "apt-get install failed for: ${missing[*]}"
}

# Configures (once) and builds the tree. Extra arguments go to the CMake configure step.
ember_build() {
  if [ ! -f "$EMBER_BUILD_DIR/CMakeCache.txt" ]; then
    log "configuring $EMBER_BUILD_DIR"
    cmake -S "$EMBER_ROOT" -B "$EMBER_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" \
      || die "CMake configure failed"
  fi
  log "building (this takes a few minutes the first time)"
  cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" || die "build failed"
}
