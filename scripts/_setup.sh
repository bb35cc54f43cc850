# Sourced by scripts/demo and scripts/test: a project virtualenv with brain installed.
# torch is installed first and pinned to a CPU build: an unpinned resolve pulls a multi-GB
# CUDA wheel. Override with TORCH_SPEC (e.g. TORCH_SPEC="torch" where a CPU index is set up).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
VENV="${BRAIN_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
export PATH="$PWD/$VENV/bin:$PATH"
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! python -c "import torch" 2>/dev/null; then
  echo "setup: installing ${TORCH_SPEC:-torch==2.13.0} (CPU)" >&2
  python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
fi
echo "setup: installing brain[$1]" >&2
python -m pip install -q -e ".[$1]"
# Model hubs may be unreachable (and are, on CI): never wait on them.
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
export TRANSFORMERS_OFFLINE="${TRANSFORMERS_OFFLINE:-1}"
