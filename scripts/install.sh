#!/bin/sh
# Installs a released cfgctl binary: downloads the archive for this machine, checks it against
# the release's SHA256SUMS, and puts `cfgctl` in a directory. POSIX sh; used by the GitHub
# Action (action.yml) and usable as is from GitLab CI or a shell:
#
#   curl -fsSL https://raw.githubusercontent.com/OWNER/cfgctl/v0.1.0/scripts/install.sh \
#     | sh -s -- --version v0.1.0 --repo https://github.com/OWNER/cfgctl
#
# Options (each also an environment variable):
#   --version TAG       release tag to install, e.g. v0.1.0                    (CFGCTL_VERSION)
#   --repo URL          the cfgctl repository                                 (CFGCTL_REPO)
#   --base-url URL      where release files are: URL/TAG/FILE                 (CFGCTL_BASE_URL)
#                       default: REPO/releases/download
#   --dir DIR           where to put cfgctl, default $HOME/.local/bin        (CFGCTL_INSTALL_DIR)
#   --source-fallback   build from source (cargo install --locked --git REPO --tag TAG) when no
#                       archive matches this machine or the release has none (CFGCTL_SOURCE_FALLBACK=1)
#
# The platform comes from `uname -s` / `uname -m`; CFGCTL_OS and CFGCTL_ARCH override them.
#
# Exit codes: 0 installed; 1 error (download failed, checksum mismatch: nothing is installed);
# 3 no archive for this platform or version, and no --source-fallback.
set -eu

version="${CFGCTL_VERSION:-}"
repo="${CFGCTL_REPO:-}"
base_url="${CFGCTL_BASE_URL:-}"
dir="${CFGCTL_INSTALL_DIR:-}"
fallback="${CFGCTL_SOURCE_FALLBACK:-0}"

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || die "--version needs a value"; version="$2"; shift 2 ;;
    --repo) [ $# -ge 2 ] || die "--repo needs a value"; repo="$2"; shift 2 ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a value"; base_url="$2"; shift 2 ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; dir="$2"; shift 2 ;;
    --source-fallback) fallback=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ -n "$version" ] || die "no version: pass --version TAG (for example v0.1.0) or set CFGCTL_VERSION"
case "$version" in
  *[!A-Za-z0-9._+-]*) die "version '$version' is not a release tag" ;;
esac
if [ -z "$base_url" ]; then
  [ -n "$repo" ] || die "no download location: pass --repo URL (the cfgctl repository) or --base-url URL"
  base_url="${repo%/}/releases/download"
fi
base_url="${base_url%/}"
[ -n "$dir" ] || dir="${HOME:?HOME is not set: pass --dir DIR}/.local/bin"

# Plain http only to this machine: an archive fetched over the network must come over TLS.
case "$base_url" in
  https://*|http://127.0.0.1[:/]*|http://localhost[:/]*|http://\[::1\][:/]*) ;;
  *) die "refusing to download from $base_url: use an https:// URL" ;;
esac

os="${CFGCTL_OS:-$(uname -s)}"
arch="${CFGCTL_ARCH:-$(uname -m)}"
target=""
case "$os" in
  Linux|linux)
    case "$arch" in
      x86_64|amd64) target=x86_64-unknown-linux-musl ;;
      aarch64|arm64) target=aarch64-unknown-linux-musl ;;
    esac ;;
  Darwin|darwin|macos|macOS)
    case "$arch" in
      x86_64|amd64) target=x86_64-apple-darwin ;;
      aarch64|arm64) target=aarch64-apple-darwin ;;
    esac ;;
esac

# No archive: build from source when allowed, else say what to do and exit 3.
no_archive() {
  if [ "$fallback" = 1 ]; then
    [ -n "$repo" ] || die "$1, and no --repo to build from"
    command -v cargo >/dev/null 2>&1 || die "$1, and cargo is not installed to build from source"
    say "$1: building from source with cargo"
    mkdir -p "$dir"
    # `cargo install --root R` writes R/bin/cfgctl; install it into DIR like an archive.
    root=$(mktemp -d)
    if printf '%s' "$version" | grep -Eq '^[0-9a-f]{40}$'; then
      cargo install --locked --git "$repo" --rev "$version" --root "$root" cfgctl || { rm -rf "$root"; die "cargo install failed"; }
    else
      cargo install --locked --git "$repo" --tag "$version" --root "$root" cfgctl || { rm -rf "$root"; die "cargo install failed"; }
    fi
    mv -f "$root/bin/cfgctl" "$dir/cfgctl" || { rm -rf "$root"; die "cannot write $dir/cfgctl"; }
    rm -rf "$root"
    say "installed cfgctl $version (built from source) in $dir"
    exit 0
  fi
  say "error: $1"
  say "build it from source instead: cargo install --locked --git ${repo:-<cfgctl repository>} --tag $version (or pass --source-fallback)"
  exit 3
}

if [ -z "$target" ]; then
  no_archive "no prebuilt cfgctl for $os/$arch (releases have x86_64 and aarch64 for Linux and macOS)"
fi

archive="cfgctl-$version-$target.tar.gz"

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 --proto '=https,http' --proto-redir '=https' -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die "neither curl nor wget is installed"
  fi
}

sha256() { # FILE -> hex digest
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    die "no sha256sum, shasum or openssl to check the download"
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

if ! download "$base_url/$version/SHA256SUMS" "$work/SHA256SUMS"; then
  no_archive "no SHA256SUMS at $base_url/$version/ (is $version a cfgctl release?)"
fi
# A line is "<64 hex>  <file>" (or "<hex> *<file>" in binary mode).
expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$work/SHA256SUMS")
if [ -z "$expected" ]; then
  no_archive "release $version has no archive for $target"
fi
download "$base_url/$version/$archive" "$work/$archive" \
  || die "cannot download $base_url/$version/$archive"
actual=$(sha256 "$work/$archive")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; nothing was installed"
fi

mkdir -p "$work/x"
tar -xzf "$work/$archive" -C "$work/x" || die "cannot unpack $archive"
bin=""
for candidate in "$work/x/cfgctl-$version-$target/cfgctl" "$work/x/cfgctl"; do
  if [ -f "$candidate" ]; then bin="$candidate"; break; fi
done
[ -n "$bin" ] || die "$archive holds no cfgctl binary"
mkdir -p "$dir" || die "cannot create $dir"
# Copy then rename, so a running cfgctl is never half-overwritten.
cp "$bin" "$dir/.cfgctl.tmp.$$" && chmod 755 "$dir/.cfgctl.tmp.$$" \
  && mv -f "$dir/.cfgctl.tmp.$$" "$dir/cfgctl" \
  || { rm -f "$dir/.cfgctl.tmp.$$"; die "cannot write $dir/cfgctl"; }
say "installed cfgctl $version ($target) in $dir"
