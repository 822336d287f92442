#!/usr/bin/env bash
# webgrad's test command (the README's): install what the tests need, then run pytest.
#
#   bash .ci/test.sh [pytest args...]     e.g. bash .ci/test.sh tests/test_unary.py -x
#
# On a fresh Debian machine with Python 3.11+ and pip this installs:
#   - webgrad itself, editable, with its test and distributed extras   (pip install -e '.[test,distributed]';
#     the distributed extra is mpi4py)
#   - PyTorch 2.13.0, pinned (an optional test oracle; the pin takes the CPU wheel here --
#     an unpinned `pip install torch` would pull the multi-GB CUDA build)
#   - Debian packages mesa-vulkan-drivers (Vulkan on the CPU, for the wgpu backend),
#     chromium (headless browser tests) and openmpi-bin + libopenmpi-dev (Open MPI, which
#     mpi4py and the multi-rank tests of webgrad.distributed run on), with apt-get when run as
#     root; otherwise it prints the command to run.
# Re-running is cheap: installed pieces are detected and skipped.
# Environment:
#   WEBGRAD_SKIP_INSTALL=1   skip every install step (quick local runs)
#   WEBGRAD_INSTALL_ONLY=1   install, then exit without running the tests (used by .ci/main.sh)
#   PYTHON=...               the interpreter to use (default: python, else python3)
#   CI=true                  set by .ci/run; in CI a skipped test fails the run (tests/conftest.py)
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-$(command -v python || command -v python3)}"
APT_PACKAGES=(mesa-vulkan-drivers chromium openmpi-bin libopenmpi-dev)
TORCH_PIN="torch==2.13.0"

say() { printf '[webgrad test.sh] %s\n' "$*"; }

install_debian() {
    command -v dpkg >/dev/null || { say "not a Debian system: install Vulkan (mesa) drivers, chromium and MPI yourself"; return; }
    local missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    if [ "$(id -u)" -ne 0 ]; then
        say "not root, so not installing Debian packages; GPU/browser tests need them:"
        say "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
        return
    fi
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_python() {
    # Debian's own python3 refuses `pip install` outside a venv (PEP 668). On a fresh machine run
    # as root (CI) installing into it is what we want; elsewhere, ask for a virtual environment.
    if "$PY" -c "import sys, sysconfig, os; sys.exit(not (sys.prefix == sys.base_prefix and
            os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED'))))"; then
        if [ "$(id -u)" -ne 0 ]; then
            say "$PY is externally managed (PEP 668): make a venv first (python3 -m venv .venv && . .venv/bin/activate)"
            exit 1
        fi
        export PIP_BREAK_SYSTEM_PACKAGES=1
    fi
    say "pip install -e '.[test,distributed]' and $TORCH_PIN (with $("$PY" --version 2>&1))"
    "$PY" -m pip install -q --disable-pip-version-check -e '.[test,distributed]'
    if ! "$PY" -c "import torch, sys; sys.exit(not torch.__version__.startswith('2.13.0'))" 2>/dev/null; then
        "$PY" -m pip install -q --disable-pip-version-check "$TORCH_PIN"
    fi
}

# The browser tests' offline pieces: the npm package pyodide (web/node_modules, pinned by
# web/package-lock.json) and the pure-Python wheels of pytest and its dependencies, which
# tests/browser/test_suite_slice.py unpacks inside Pyodide (build/pyodide-wheels; both gitignored).
PYODIDE_TEST_WHEELS=(pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.3 pygments==2.21.0)

install_web() {
    if [ ! -f web/node_modules/pyodide/pyodide.mjs ]; then
        if ! command -v npm >/dev/null; then
            if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
                say "apt-get install npm"
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
            else
                say "npm not found; the browser tests need it: sudo apt-get install -y npm, then rerun"
                return
            fi
        fi
        say "npm ci in web/ (pyodide)"
        (cd web && npm ci --no-audit --no-fund --loglevel=error)
    fi
    local missing=()
    for w in "${PYODIDE_TEST_WHEELS[@]}"; do
        ls build/pyodide-wheels/"${w%%==*}"-"${w##*==}"-*.whl >/dev/null 2>&1 || missing+=("$w")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "pip download ${missing[*]} (for pytest inside Pyodide)"
        "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
            --dest build/pyodide-wheels "${missing[@]}"
    fi
}

if [ "${WEBGRAD_SKIP_INSTALL:-}" != 1 ]; then
    install_debian
    install_python
    install_web
fi
[ "${WEBGRAD_INSTALL_ONLY:-}" = 1 ] && exit 0

exec "$PY" -m pytest -q -ra --durations=15 "$@"
