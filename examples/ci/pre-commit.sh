#!/usr/bin/env sh
# A plain git hook: copy to .git/hooks/pre-commit (or call it from yours).
# Validates the manifests offline; a commit with an invalid manifest is refused.
set -eu
CONFIG_DIR="${CONFIG_DIR:-config}"
cfgctl validate "$CONFIG_DIR"
