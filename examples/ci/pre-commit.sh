#!/usr/bin/env sh
# A plain git hook: copy to .git/hooks/pre-commit (or call it from yours).
# Validates the manifests offline; a commit with an invalid manifest is refused.
# Needs cfgctl on PATH: scripts/install.sh of github.com/OWNER/cfgctl (see docs/ci.md).
set -eu
CONFIG_DIR="${CONFIG_DIR:-config}"
cfgctl validate "$CONFIG_DIR"
