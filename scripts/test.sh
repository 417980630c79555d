#!/usr/bin/env bash
# Runs every test of the project: the Go packages, then the Python package's
# tests (python/tests) against serve processes built from this tree and a
# Dask LocalCluster. The Python side installs the package with the pinned
# versions of python/constraints.txt into a virtual environment (.venv, or
# $SHUFFLENODE_VENV), made on first use; it needs Python 3.11+ with venv and pip.
set -euo pipefail
cd "$(dirname "$0")/.."

go test -count=1 -timeout 15m ./...

venv=${SHUFFLENODE_VENV:-.venv}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
go build -o "$venv/bin/shufflenode" ./cmd/shufflenode
export SHUFFLENODE_BIN="$(cd "$venv/bin" && pwd)/shufflenode" # the package takes this build instead of making its own
"$venv/bin/pip" install -q -c python/constraints.txt './python[test,dask,xarray]'
"$venv/bin/python" -m pytest -q python/tests
