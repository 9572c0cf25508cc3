#!/usr/bin/env bash
# Installs what clusterbench needs on Debian 12, and nothing that is already there:
# Debian's toolchains and offline benchmark providers, then a .venv with ReFrame
# and clusterbench itself. Safe to run again; a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  make gcc gfortran valgrind
  openmpi-bin libopenmpi-dev
  mpich libmpich-dev
  libopenblas-dev
  hpcc netpipe-openmpi
  chromium fonts-dejavu-core
  slurm-wlm munge slurmdbd mariadb-server nftables iproute2
)
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

stamp="$VENV/.clusterbench-installed"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  python3 -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing clusterbench and ReFrame into $VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e '.[dev]'
  touch "$stamp"
fi
