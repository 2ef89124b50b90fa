#!/bin/sh
# test_install.sh CMAKE BUILD_DIR EXAMPLES_DIR GENERATOR CC LIBDIR [CMAKE_ARGS...]
# Install the build into a temporary prefix; configure and build EXAMPLES_DIR as a separate
# project with find_package(krill) and run the example; compile it once more with
# pkg-config and run that too. Each run must print a converged solve with a small error.
# $KRILL_EXAMPLE_CFLAGS (e.g. sanitizer flags) is added to both compilations of the example.
set -u
extra_cflags=${KRILL_EXAMPLE_CFLAGS:-}
cmake=$1 build=$2 examples=$3 generator=$4 cc=$5 libdir=$6
shift 6
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() { echo "FAIL: $*"; exit 1; }
# check_output FILE: "converged" and a max error below 1e-6 on the example's output line.
check_output() {
  cat "$1"
  grep -q 'converged' "$1" || fail "the example did not converge"
  awk '{ for (i = 1; i < NF; i++) if ($i == "error") e = $(i + 1) }
       END { exit !(e != "" && e + 0 < 1e-6) }' "$1" || fail "the example's error is not < 1e-6"
}

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "cmake --install failed"; }
for f in bin/krill include/krill.h include/krill/solver.h "$libdir/libkrill.a" \
         "$libdir/pkgconfig/krill.pc" "$libdir/cmake/krill/krillConfig.cmake" \
         "$libdir/cmake/krill/krillConfigVersion.cmake" "$libdir/cmake/krill/krillTargets.cmake"; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
ls "$prefix/$libdir"/libkrill.so* >/dev/null 2>&1 || fail "libkrill.so was not installed"
"$prefix/bin/krill" --version || fail "the installed krill does not run"
# the installed shared library finds every library it needs without LD_LIBRARY_PATH (its
# RUNPATH names the folders outside the system's, CMakeLists.txt)
if command -v ldd >/dev/null; then
  for so in "$prefix/$libdir"/libkrill.so; do
    env -u LD_LIBRARY_PATH ldd "$so" >"$tmp/ldd.txt" 2>&1 || { cat "$tmp/ldd.txt"; fail "ldd $so failed"; }
    if grep -q "not found" "$tmp/ldd.txt"; then
      cat "$tmp/ldd.txt"; fail "the installed $so does not find its libraries"
    fi
  done
fi

# 1. CMake package
"$cmake" -S "$examples" -B "$tmp/example" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$extra_cflags" "$@" >"$tmp/configure.log" 2>&1 \
  || { cat "$tmp/configure.log"; fail "configuring the example with find_package(krill) failed"; }
"$cmake" --build "$tmp/example" >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log"; fail "building the example failed"; }
"$tmp/example/solve_csr" >"$tmp/run_cmake.txt" 2>&1 || { cat "$tmp/run_cmake.txt"; fail "the example (CMake) failed"; }
check_output "$tmp/run_cmake.txt"

# 2. pkg-config
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs krill) \
    || fail "pkg-config does not find krill"
  echo "pkg-config --cflags --libs krill: $flags"
  # shellcheck disable=SC2086
  "$cc" -std=c11 $extra_cflags "$examples/solve_csr.c" $flags -lm -Wl,-rpath,"$prefix/$libdir" \
    -o "$tmp/solve_csr_pc" || fail "compiling the example with pkg-config flags failed"
  "$tmp/solve_csr_pc" >"$tmp/run_pc.txt" 2>&1 || { cat "$tmp/run_pc.txt"; fail "the example (pkg-config) failed"; }
  check_output "$tmp/run_pc.txt"
else
  echo "pkg-config is not installed: its half of the test is not run"
fi
echo "PASS"
