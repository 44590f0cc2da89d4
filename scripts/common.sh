# Shared helpers for Ember's scripts (sourced, not run). Everything here is idempotent: it
# installs only what is missing and re-uses an existing build folder.

EMBER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EMBER_BUILD_DIR="${EMBER_BUILD_DIR:-$EMBER_ROOT/build}"
export EMBER_MODELS_DIR="${EMBER_MODELS_DIR:-$HOME/.cache/ember/models}"

# Debian packages needed to build and test Ember.
EMBER_DEBIAN_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ccache
  libsentencepiece-dev libspdlog-dev libsqlite3-dev libpcre2-dev nlohmann-json3-dev
  libcpp-httplib-dev libssl-dev python3-venv
  libcurl4-openssl-dev qtkeychain-qt6-dev
  qt6-base-dev
  qt6-declarative-dev qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtqml-workerscript qml6-module-qtquick-templates
  qml6-module-qtquick-dialogs qml6-module-qtqml libqt6svg6 fonts-noto-cjk xvfb xauth
  xdotool xclip imagemagick tesseract-ocr qt6-l10n-tools libsource-highlight-dev
  python3 python3-pip python3-jinja2 unzip ca-certificates
  # QtKeychain reaches the desktop keyring through libsecret, which it loads at run time; the
  # keyring test runs a real Secret Service (gnome-keyring) on its own D-Bus session bus.
  libsecret-1-0 gnome-keyring libsecret-tools dbus-daemon dbus-bin
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

# ccache, when installed, keyed so that another clone of the tree (CI's fresh one) reuses the
# objects: paths under the clone are hashed relative to it, the working folder (only in debug
# info) is left out, and the cache is large enough for the plain, sanitizer and fuzz trees.
# A user's own ccache settings win.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$EMBER_ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-include_file_ctime,include_file_mtime,time_macros}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"

# Configures EMBER_BUILD_DIR once (extra arguments go to CMake); ccache is used when installed.
ember_configure() {
  [ -f "$EMBER_BUILD_DIR/CMakeCache.txt" ] && return
  local launcher=()
  if command -v ccache >/dev/null && [ -z "${CCACHE_DISABLE:-}" ]; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
              -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  log "configuring $EMBER_BUILD_DIR"
  cmake -S "$EMBER_ROOT" -B "$EMBER_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "${launcher[@]}" "$@" || die "CMake configure failed"
}

# Configures (once) and builds the tree. Extra arguments go to the CMake configure step.
ember_build() {
  ember_configure "$@"
  log "building (this takes a few minutes the first time)"
  cmake --build "$EMBER_BUILD_DIR" -j"$(nproc)" || die "build failed"
}

# True when the configured EMBER_BUILD_DIR defines the target $1. ninja's list is read whole
# first: piped straight into `grep -q`, grep exits at the first match, ninja then dies of
# SIGPIPE and under `pipefail` the pipeline reads as "no such target" (it did, at random).
ember_has_target() {
  local all
  all="$(ninja -C "$EMBER_BUILD_DIR" -t targets all 2>/dev/null)" || return 1
  grep -q "^$1:" <<<"$all"
}

# Creates (once) the pinned venv of the openai SDK checks outside the build folders and prints
# its path, for -DEMBER_OPENAI_TEST_VENV: the plain and sanitizer builds, and every clone, share
# it (EMBER_OPENAI_TEST_VENV overrides the place).
ember_openai_test_venv() {
  local venv="${EMBER_OPENAI_TEST_VENV:-$HOME/.cache/ember/venv-openai-tests}"
  /usr/bin/python3 "$EMBER_ROOT/tests/openai/openai_test_venv.py" "$venv" >/dev/null \
    || die "could not create the openai test venv at $venv"
  echo "$venv"
}

# Sanitizer run-time options: stop at the first finding with a stack trace; known leaks and
# races inside uninstrumented system libraries (Qt, fontconfig, Mesa) are suppressed by name.
ember_sanitizer_environment() {
  local supp="$EMBER_ROOT/tests/sanitizers"
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:suppressions=$supp/asan.supp"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
  # Qt's own plugins and fonts under Xvfb-less tests.
  export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
  # The app under test draws with Qt Quick's software renderer: through OpenGL, Mesa's llvmpipe
  # driver is unloaded at exit, so LeakSanitizer can name neither the module nor the caller of
  # the 112 bytes the driver keeps, and no suppression can match them. The plain suite still
  # renders through OpenGL.
  export QT_QUICK_BACKEND="${QT_QUICK_BACKEND:-software}"
}
