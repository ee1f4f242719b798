#!/usr/bin/env bash
# Installs what the tests need, then runs the linters and the whole suite.
# This is the README's test command, and .ci/run calls it unchanged. Run it as root (it may
# apt-get install Dovecot and start PostgreSQL); the tests start and stop their own Dovecot and
# SMTP servers on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's packages the tests need: Dovecot (IMAP, LMTP) and openssl for the mail stack;
# Postfix for the docs' Postfix recipes (tests/test_postfix.py starts its own instance on its
# own ports and config folder; the package's own service is never started); Chromium and the
# DejaVu fonts for the screenshots and browser tests. Only what is missing.
packages=()
command -v dovecot >/dev/null || packages+=(dovecot-imapd dovecot-lmtpd)
if ! command -v postfix >/dev/null; then
  packages+=(postfix)
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
fi
command -v openssl >/dev/null || packages+=(openssl)
[ -x /usr/bin/chromium ] || packages+=(chromium)
[ -d /usr/share/fonts/truetype/dejavu ] || packages+=(fonts-dejavu-core)
if [ "${#packages[@]}" -gt 0 ]; then
  echo "== installing ${packages[*]}"
  [ -e /usr/sbin/policy-rc.d ] || printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${packages[@]}" >/dev/null
fi
id vmail >/dev/null 2>&1 || useradd --system --no-create-home vmail

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "== starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== ruff"
ruff check referee tests bench examples scripts
ruff format --check referee tests bench examples scripts
echo "== mypy --strict"
mypy
echo "== pytest"
# Two workers, each taking whole test files (most tests wait on servers and processes, so the
# two cores are used while one waits); PYTEST_WORKERS=0 runs in this process instead.
python3 -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile "$@"
