#!/usr/bin/env bash
# python/run_tests.sh - the Python package's tests (doc/python.md), run by `make test`:
# a virtual environment in build-python/, the build requirements from the package index,
# `pip install ./python` (CUDA off unless PY_CUDA=ON: the package's CPU path is what the
# tests cover, and the CUDA build takes minutes more), then pytest python/tests.
#
# PYTHON_TESTS=auto (default): when the package index cannot be reached (an offline
# machine), say so and skip; a build or test failure still fails. on: never skip (CI).
# off: skip.
#
# PYTHON_VENV=off: no virtual environment and no package index (a GPU machine offline):
# python3's own scikit-build-core, nanobind, numpy, scipy and pytest (and CuPy for the gpu
# tests) are used; the package is installed into build-python/site and tested from there.
# PY_CUDA=ON builds krill and the extension with CUDA (nvcc from PATH or /usr/local/cuda);
# PYTEST_ARGS are passed to pytest in either mode, e.g. the CuPy tests alone on a GPU:
#   PYTHON_VENV=off PY_CUDA=ON PYTEST_ARGS="-m gpu -rs" python/run_tests.sh
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${PYTHON_TESTS:-auto}
venv=build-python/venv
if [ "$mode" = off ]; then
  echo "python tests: skipped (PYTHON_TESTS=off)"
  exit 0
fi
if [ "${PYTHON_VENV:-on}" = off ]; then
  site=build-python/site
  if [ "${PY_CUDA:-OFF}" = ON ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  rm -rf "$site"
  CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-$(nproc)}" python3 -m pip install -q --no-build-isolation \
    --no-deps --no-index --target "$site" ./python \
    -C cmake.define.KRILL_WITH_CUDA="${PY_CUDA:-OFF}" \
    -C build-dir="$PWD/build-python/cmake-site-${PY_CUDA:-OFF}" || exit 1
  # shellcheck disable=SC2086  # PYTEST_ARGS: several arguments
  PYTHONPATH="$PWD/$site${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q python/tests ${PYTEST_ARGS:-}
  exit
fi
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  echo "python tests: python3 has no venv module (Debian: apt-get install python3-venv)" >&2
  [ "$mode" = on ] && exit 1
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || exit 1
if ! "$venv/bin/pip" install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy scipy pytest; then
  echo "python tests: the build requirements could not be installed from the package index" >&2
  [ "$mode" = on ] && exit 1
  echo "python tests: skipped (PYTHON_TESTS=on makes this an error)"
  exit 0
fi
CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-$(nproc)}" "$venv/bin/pip" install -q --no-build-isolation \
  ./python -C cmake.define.KRILL_WITH_CUDA="${PY_CUDA:-OFF}" -C build-dir="$PWD/build-python/cmake" ||
  exit 1
# shellcheck disable=SC2086  # PYTEST_ARGS: several arguments
"$venv/bin/pytest" -q python/tests ${PYTEST_ARGS:-}
