#!/usr/bin/env bash
# webgrad's main job: install (as .ci/test.sh does), then a real training run.
#
#   bash .ci/main.sh          (WEBGRAD_SKIP_INSTALL=1 skips the installs)
set -euo pipefail
cd "$(dirname "$0")/.."
WEBGRAD_INSTALL_ONLY=1 bash .ci/test.sh
exec "${PYTHON:-$(command -v python || command -v python3)}" examples/digits_mlp.py "$@"
