#!/usr/bin/env bash
# Installs what the tests need, then runs the linters and the whole suite.
# This is the README's test command, and .ci/run calls it unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== ruff"
ruff check referee tests bench examples
ruff format --check referee tests bench examples
echo "== mypy --strict"
mypy
echo "== pytest"
python3 -m pytest "$@"
