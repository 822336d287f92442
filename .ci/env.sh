# Sourced by .ci/main.sh and .ci/test.sh: the project's Python environment, and what the main job
# installs into it. Nothing here installs into a system interpreter.
#
# The interpreter ($PY):
#   - $PYTHON if given, else python3 (else python), when that is already a virtual environment's
#     (an activated venv, or PYTHON=path/to/venv/bin/python);
#   - otherwise the project's own .venv, created from it with the standard library's venv on first
#     use (WEBGRAD_SKIP_INSTALL=1 creates nothing: it uses .venv if there, else the interpreter as is).
# Each install step first asks the environment what it lacks, so re-running costs a second or two.

say() { printf '[webgrad %s] %s\n' "${WEBGRAD_JOB:-ci}" "$*"; }

# webgrad's runtime dependencies (pyproject.toml's [project] dependencies; a test keeps them in step)
RUNTIME_PACKAGES=(numpy wgpu ml_dtypes)
# what examples/digits_mlp.py needs beyond them: the digits, the plot, the progress bar
MAIN_PACKAGES=(scikit-learn matplotlib tqdm)

in_a_venv() { "$1" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; }

setup_python() {
    local base="${PYTHON:-$(command -v python3 || command -v python || true)}"
    [ -n "$base" ] || { say "no python3 found: install Python 3.10 or newer"; exit 1; }
    if in_a_venv "$base"; then
        PY="$base"
    elif [ -x .venv/bin/python ] && .venv/bin/python -c '' 2>/dev/null; then
        PY="$PWD/.venv/bin/python"
    elif [ "${WEBGRAD_SKIP_INSTALL:-}" = 1 ]; then
        PY="$base"
    else
        make_venv "$base"
        PY="$PWD/.venv/bin/python"
    fi
}

make_venv() {
    say "creating the virtual environment .venv ($("$1" --version 2>&1))"
    "$1" -m venv --clear .venv && return
    # Debian ships venv's pip bootstrap in a package of its own
    local pkg="python3-venv"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        say "apt-get install $pkg"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
        "$1" -m venv --clear .venv && return
    fi
    say "could not create .venv with $1 -m venv; on Debian/Ubuntu: sudo apt-get install -y $pkg"
    exit 1
}

# The requirements among "$@" (name, name==version or name>=version) that $PY's environment lacks.
missing_packages() {
    "$PY" - "$@" <<'EOF'
import re, sys
from importlib.metadata import PackageNotFoundError, version

def numbers(v):
    return tuple(int(n) for n in re.findall(r"\d+", v.split("+")[0])[:3])

for spec in sys.argv[1:]:
    name, op, want = re.match(r"([A-Za-z0-9_.-]+)\s*(==|>=)?\s*(.*)", spec).groups()
    try:
        have = version(name)
    except PackageNotFoundError:
        print(spec)
        continue
    if (op == "==" and numbers(have) != numbers(want)) or (op == ">=" and numbers(have) < numbers(want)):
        print(spec)
EOF
}

# Whether $PY imports webgrad from this checkout (an editable install of it).
webgrad_from_here() {
    "$PY" -c 'import os, sys, webgrad; sys.exit(os.path.dirname(os.path.realpath(webgrad.__file__)) != os.path.realpath("core"))' \
        2>/dev/null
}

pip_install() {
    say "pip install $*"
    "$PY" -m pip install -q --disable-pip-version-check "$@"
}

# webgrad (editable), its runtime dependencies and the main job's example's own packages.
install_main() {
    local args=() missing=()
    mapfile -t missing < <(missing_packages "${RUNTIME_PACKAGES[@]}" "${MAIN_PACKAGES[@]}")
    webgrad_from_here && [ ${#missing[@]} -eq 0 ] && return
    webgrad_from_here || args+=(-e .)
    pip_install "${args[@]}" "${missing[@]}"
}
