#!/usr/bin/env bash
# Installs what clusterbench needs on Debian 12, and nothing that is already there:
# Debian's toolchains and offline benchmark providers, then a .venv with ReFrame
# and clusterbench itself. Safe to run again; a second run installs nothing.
#
#   scripts/setup.sh run     what the default suite needs (`make run`)
#   scripts/setup.sh test    that, plus what only the tests need (`make test`):
#                            the Slurm test cluster's daemons, a browser, valgrind
#   scripts/setup.sh PROFILE --list   print the profile's Debian packages, install nothing
#
# A cluster login node needs neither: see README.md, "Adopting clusterbench at
# your centre" (a venv and `pip install`, no root).
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_PACKAGES=(
  make gcc gfortran
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  libopenblas-dev
  hpcc netpipe-openmpi
)
# Only the tests use these: the Slurm test cluster `box` (munge, MariaDB,
# slurmdbd, network namespaces and nftables), the report's browser test, and
# the CG solver's memory check.
TEST_PACKAGES=(
  valgrind
  chromium fonts-dejavu-core
  slurm-wlm munge slurmdbd mariadb-server nftables iproute2
)

usage() {
  echo "usage: $0 run|test [--list]" >&2
  exit 2
}
profile=${1:-}
case "$profile" in
  run) APT_PACKAGES=("${RUN_PACKAGES[@]}"); EXTRAS='' ;;
  test) APT_PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}"); EXTRAS='[dev]' ;;
  *) usage ;;
esac
case "${2:-}" in
  --list) printf '%s\n' "${APT_PACKAGES[@]}"; exit 0 ;;
  '') ;;
  *) usage ;;
esac
VENV=${VENV:-.venv}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$pkg")
done
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
fi

# One stamp per profile: a venv set up for `run` still gets the test tools.
stamp="$VENV/.clusterbench-installed-$profile"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  python3 -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing clusterbench${EXTRAS} and ReFrame into $VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e ".${EXTRAS}"
  touch "$stamp"
fi
