#!/usr/bin/env bash
# webgrad's main job (the README's first command): set up the project's Python environment, install
# what the job needs -- webgrad (editable), numpy, wgpu, ml_dtypes, and the example's scikit-learn
# (the digits), matplotlib (the plot) and tqdm (the progress bar) -- then train an MLP on the digits
# (examples/digits_mlp.py; arguments go to it, e.g. --quick). The tests' extras (PyTorch, Playwright,
# Debian packages, Pyodide) are .ci/test.sh's.
#
#   bash .ci/main.sh              installs into .venv (made with python3 -m venv unless a virtual
#                                 environment is active); re-running skips what is installed
# Environment: WEBGRAD_SKIP_INSTALL=1 skips the installs; PYTHON=... the interpreter (see .ci/env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
WEBGRAD_JOB=main.sh
. .ci/env.sh

setup_python
[ "${WEBGRAD_SKIP_INSTALL:-}" = 1 ] || install_main
say "training: $PY examples/digits_mlp.py $*"
exec "$PY" examples/digits_mlp.py "$@"
