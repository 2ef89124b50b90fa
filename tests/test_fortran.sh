#!/bin/sh
# test_fortran.sh FC CMAKE BUILD_DIR SOURCE_DIR CC LIBDIR
# The Fortran module against the installed package (doc/fortran.md): install the build into
# a temporary prefix; compile its include/krill/krill.f90 with FC (as Fortran 2003 when FC is
# gfortran); check that the module's constants and bind(C) types match the installed C
# headers (tests/fortran_abi.c and .f90 print the same lines); build tests/test_fortran.f90
# and examples/fem2d.f90 against the module and the installed libkrill and run them.
# Exits 77 (skipped) when FC is empty or does not run: CMake found no Fortran compiler.
# $KRILL_EXAMPLE_CFLAGS (e.g. sanitizer flags) is added to every compilation and link.
set -u
extra_flags=${KRILL_EXAMPLE_CFLAGS:-}
fc=$1 cmake=$2 build=$3 src=$4 cc=$5 libdir=$6
if [ -z "$fc" ] || ! "$fc" --version >/dev/null 2>&1; then
  echo "SKIP: no Fortran compiler (CMake found none, or KRILL_WITH_FORTRAN=OFF): install" \
       "gfortran and configure again"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "cmake --install failed"; }
module=$prefix/include/krill/krill.f90
[ -f "$module" ] || fail "include/krill/krill.f90 was not installed"
"$fc" --version | head -n 1

# The module as a user compiles it: in the user's directory, with the user's compiler. With
# gfortran: as strict Fortran 2003 (what the module claims to be), every warning an error.
std_flags=""
if "$fc" --version 2>/dev/null | grep -q "GNU Fortran"; then
  std_flags="-std=f2003 -pedantic -Wall -Wextra -Werror"
fi
cd "$tmp" || exit 1
# shellcheck disable=SC2086
"$fc" $std_flags $extra_flags -c "$module" -o krill.o \
  || fail "compiling the installed krill.f90 failed"
link="-L$prefix/$libdir -lkrill -Wl,-rpath,$prefix/$libdir"

# 1. The module agrees with the C headers: enumerator values, type sizes, field offsets.
# shellcheck disable=SC2086
"$cc" -std=c11 $extra_flags -I"$prefix/include" "$src/tests/fortran_abi.c" -o abi_c \
  || fail "compiling tests/fortran_abi.c against the installed headers failed"
# shellcheck disable=SC2086
"$fc" $extra_flags "$src/tests/fortran_abi.f90" krill.o $link -o abi_f \
  || fail "compiling tests/fortran_abi.f90 failed"
./abi_c >abi_c.txt || fail "fortran_abi (C) failed"
./abi_f >abi_f.txt || fail "fortran_abi (Fortran) failed"
[ "$(wc -l <abi_c.txt)" -gt 50 ] || fail "fortran_abi (C) printed too little"
diff abi_c.txt abi_f.txt || fail "module krill does not match the C headers (< C, > Fortran)"
echo "module krill matches the C headers: $(wc -l <abi_c.txt) values, sizes and offsets"

# 2. The wrappers.
# shellcheck disable=SC2086
"$fc" $extra_flags "$src/tests/test_fortran.f90" krill.o $link -o test_fortran \
  || fail "compiling tests/test_fortran.f90 failed"
./test_fortran || fail "test_fortran failed"

# 3. The example: a finite-element system assembled in Fortran, solved twice.
# shellcheck disable=SC2086
"$fc" $extra_flags "$src/examples/fem2d.f90" krill.o $link -o fem2d \
  || fail "compiling examples/fem2d.f90 failed"
./fem2d >fem2d.txt 2>&1
rc=$?
cat fem2d.txt
[ "$rc" -eq 0 ] || fail "the example exited with $rc"
[ "$(grep -c 'converged' fem2d.txt)" -eq 2 ] \
  || fail "the example did not print two converged solves"
echo "PASS"
