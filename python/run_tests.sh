#!/usr/bin/env bash
# python/run_tests.sh - the Python package's tests (doc/python.md), run by `make test`:
# a virtual environment in build-python/, the build requirements from the package index,
# `pip install ./python` (CUDA off unless PY_CUDA=ON: the package's CPU path is what the
# tests cover, and the CUDA build takes minutes more), then pytest python/tests.
#
# PYTHON_TESTS=auto (default): when the package index cannot be reached (an offline
# machine), say so and skip; a build or test failure still fails. on: never skip (CI).
# off: skip.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${PYTHON_TESTS:-auto}
venv=build-python/venv
if [ "$mode" = off ]; then
  echo "python tests: skipped (PYTHON_TESTS=off)"
  exit 0
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
"$venv/bin/pytest" -q python/tests
