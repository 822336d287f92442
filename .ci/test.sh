#!/usr/bin/env bash
# webgrad's test command (the README's): install what the tests need, then run pytest.
#
#   bash .ci/test.sh [pytest args...]     e.g. bash .ci/test.sh tests/test_unary.py -x
#
# On a fresh Debian machine with Python 3.10+ this installs, into the project's virtual environment
# .venv (made with python3 -m venv unless one is active; the system interpreter is never touched):
#   - what .ci/main.sh installs: webgrad (editable), numpy, wgpu, ml_dtypes, scikit-learn,
#     matplotlib, tqdm
#   - webgrad's test and distributed extras (pyproject.toml's [test]: pytest, build, playwright, ...;
#     [distributed]: mpi4py)
#   - PyTorch 2.13.0, pinned (an optional test oracle; the pin takes the CPU wheel here --
#     an unpinned `pip install torch` would pull the multi-GB CUDA build)
#   - Debian packages mesa-vulkan-drivers (Vulkan on the CPU, for the wgpu backend), chromium
#     (headless browser tests) and openmpi-bin + libopenmpi-dev (Open MPI, for mpi4py and the
#     multi-rank tests), with apt-get when run as root; otherwise it prints the command to run.
# Re-running is cheap: installed pieces are detected and skipped.
# Environment:
#   WEBGRAD_SKIP_INSTALL=1   skip every install step (quick local runs)
#   WEBGRAD_INSTALL_ONLY=1   install, then exit without running the tests
#   PYTHON=...               the interpreter (a venv's is used as is; another makes .venv: .ci/env.sh)
#   CI=true                  set by .ci/run; in CI a skipped test fails the run (tests/conftest.py)
set -euo pipefail
cd "$(dirname "$0")/.."
WEBGRAD_JOB=test.sh
. .ci/env.sh

APT_PACKAGES=(mesa-vulkan-drivers chromium openmpi-bin libopenmpi-dev)
TORCH_PIN="torch==2.13.0"
# every extra of pyproject.toml's [project.optional-dependencies] (a test keeps them in step),
# checked before pip is asked
TEST_PACKAGES=("pytest>=7" build "setuptools>=68" wheel scikit-learn safetensors playwright hypothesis "mpi4py>=3.1" jupyterlite-core==0.8.6 jupyterlite-pyodide-kernel==0.8.6 packaging tensorboard)

install_debian() {
    command -v dpkg >/dev/null || { say "not a Debian system: install Vulkan (mesa) drivers, chromium and Open MPI yourself"; return; }
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
    install_main
    local missing=()
    mapfile -t missing < <(missing_packages "${TEST_PACKAGES[@]}" "$TORCH_PIN")
    [ ${#missing[@]} -eq 0 ] || pip_install "${missing[@]}"
}

# The browser tests' offline pieces: the npm package pyodide (web/node_modules, pinned by
# web/package-lock.json) and the pure-Python wheels of pytest and its dependencies, which
# tests/browser/test_suite_slice.py unpacks inside Pyodide (build/pyodide-wheels; both gitignored).
PYODIDE_TEST_WHEELS=(pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.3 pygments==2.21.0)
# The JupyterLite kernel's start-up packages (micropip, IPython, ...: webgrad.web.notebook's KERNEL_WHEELS),
# pure-Python wheels for Pyodide's Python 3.14, which tests/browser/test_notebook.py puts in its site
# (build/notebook-wheels, gitignored).
download_notebook_wheels() {
    local missing=()
    mapfile -t missing < <("$PY" -c 'import sys; from pathlib import Path; from webgrad.web.notebook import wheels_missing
sys.stdout.writelines(s + "\n" for s in wheels_missing(Path("build/notebook-wheels")))')
    [ ${#missing[@]} -eq 0 ] && return
    say "pip download ${missing[*]} (the JupyterLite kernel's packages)"
    "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.14 \
        --dest build/notebook-wheels "${missing[@]}"
}

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
    download_notebook_wheels
}

setup_python
if [ "${WEBGRAD_SKIP_INSTALL:-}" != 1 ]; then
    install_debian
    install_python
    install_web
fi
[ "${WEBGRAD_INSTALL_ONLY:-}" = 1 ] && exit 0

exec "$PY" -m pytest -q -ra --durations=15 "$@"
